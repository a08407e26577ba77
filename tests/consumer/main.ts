// A tiny consumer that type-checks against the published types with `tsc --noEmit`.
import {
  Memory,
  MemoryStore,
  IndexedDBStore,
  KVStore,
  EdgememError,
  type Account,
  type DecimalString,
  type ErrorCode,
  type Session,
  type Store,
  type TransferResultCode,
} from "edgemem";

async function main(): Promise<void> {
  const store: Store = new MemoryStore();
  const memory = await Memory.open({ store, namespace: "shop", snapshotEveryOps: 100, clock: () => Date.now() });
  const { created, session } = await memory.getOrCreateSession("chat-1", { ttl_seconds: 3600, data: { budget: "12.50" } });
  const s: Session = await memory.appendMessages("chat-1", [{ role: "user", content: "hello" }]);
  const firstId: string = s.messages[0].id;
  const page: { sessions: string[]; total: number } = await memory.listSessions({ limit: 10 });
  const maybe: Session | null = await memory.getSession("chat-1", { recentMessagesLimit: 5 });
  try {
    await memory.putSession("chat-1", { ttl_seconds: -1 });
  } catch (err) {
    if (err instanceof EdgememError) {
      const code: ErrorCode = err.code;
      console.log(code, err.message);
    }
  }
  const idb: Promise<IndexedDBStore> = IndexedDBStore.open("x");
  const kv = new KVStore({
    get: async () => null,
    put: async () => {},
    delete: async () => {},
    list: async () => ({ keys: [], list_complete: true }),
  });
  await memory.publishSnapshot(kv, { keyPrefix: "pub/" });
  const account: Account = await memory.ledger.createAccount({ id: "agent", asset: "USDC", flags: ["debits_must_not_exceed_credits"], max_transfer: "50" });
  const results = await memory.ledger.createTransfers([{ id: "t1", debit_account: "bank", credit_account: "agent", amount: "12.50" }]);
  const code: TransferResultCode = results[0].result;
  const outcome: { bet_id: string } = await memory.ledger.executeOnce("place_bet", { stake: "5" }, async () => ({ bet_id: "b1" }));
  const balance: DecimalString = account.balance;
  console.log(created, session.session_id, firstId, page.total, maybe?.context, idb, code, outcome.bet_id, balance);
  // @ts-expect-error: amounts are decimal strings, never JS numbers
  await memory.ledger.createTransfers([{ id: "t2", debit_account: "bank", credit_account: "agent", amount: 12.5 }]);
  // @ts-expect-error: amounts and ids are strings, never numbers
  await memory.getSession(42);
}

void main();
