// A tiny strict consumer that type-checks against the published types with
// `tsc --noEmit`, without the DOM lib and with skipLibCheck off, under
// moduleResolution bundler (tsconfig.bundler.json) and nodenext
// (tsconfig.nodenext.json). The @ts-expect-error lines prove that the types
// refuse what the runtime refuses.
import {
  Memory,
  MemoryStore,
  IndexedDBStore,
  KVStore,
  EdgememError,
  Tokenizer,
  VectorIndex,
  buildContext,
  fitsContext,
  LIMITS,
  type AppendResult,
  type Account,
  type BudgetRequest,
  type CompactOptions,
  type DecimalString,
  type ErrorCode,
  type IDBFactoryLike,
  type PromptRequest,
  type SearchQuery,
  type Session,
  type Store,
  type TransferResultCode,
} from "edgemem";

/** Stands in for console.log: this project has neither the DOM lib nor Node's types. */
function use(..._values: unknown[]): void {}

async function main(): Promise<void> {
  const store: Store = new MemoryStore();
  const memory = await Memory.open({ store, namespace: "shop", snapshotEveryOps: 100, clock: () => Date.now() });
  const { created, session } = await memory.getOrCreateSession("chat-1", { ttl_seconds: 3600, data: { budget: "12.50" } });
  const added: AppendResult = await memory.appendMessages("chat-1", [{ role: "user", content: "hello" }]);
  const firstId: string = added.appended[0].id;
  const count: number = added.message_count;
  const limit: 1000 = LIMITS.APPEND_MESSAGES_MAX;
  use(count, limit);
  const page: { sessions: string[]; total: number } = await memory.listSessions({ limit: 10 });
  const maybe: Session | null = await memory.getSession("chat-1", { recentMessagesLimit: 5 });
  try {
    await memory.putSession("chat-1", { ttl_seconds: -1 });
  } catch (err) {
    if (err instanceof EdgememError) {
      const code: ErrorCode = err.code;
      use(code, err.message);
    }
  }
  // Any IndexedDB factory fits, structurally: no DOM lib needed.
  const factory: IDBFactoryLike = { open: (name: string, version?: number) => ({ name, version }) };
  const idb: Promise<IndexedDBStore> = IndexedDBStore.open("x", { indexedDB: factory });
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
  use(created, session.session_id, firstId, page.total, maybe?.context, idb, code, outcome.bet_id, balance);
  // @ts-expect-error: amounts are decimal strings, never JS numbers
  await memory.ledger.createTransfers([{ id: "t2", debit_account: "bank", credit_account: "agent", amount: 12.5 }]);
  // @ts-expect-error: amounts and ids are strings, never numbers
  await memory.getSession(42);

  // Token budgets name a window: a model, max_tokens, or both.
  const slots = [{ name: "system", content: "be brief", priority: 9 }];
  const byModel: BudgetRequest = { model: "gpt-4o", slots };
  await buildContext(byModel);
  await buildContext({ max_tokens: 8192, encoding: "cl100k_base", slots }, { counter: (t) => t.length });
  await fitsContext({ model: "gpt-4o", max_tokens: 4096, messages: [{ role: "user", content: "hi" }] });
  const tokenizer = await Tokenizer.load("o200k_base");
  use(tokenizer.buildContext({ max_tokens: 1000, slots }).used, tokenizer.count("hello"));
  // @ts-expect-error: neither model nor max_tokens
  await buildContext({ slots });
  // @ts-expect-error: neither model nor max_tokens
  await buildContext({ encoding: "o200k_base", reserve_for_output: 10, slots }, { counter: (t) => t.length });
  // @ts-expect-error: neither model nor max_tokens
  await fitsContext({ messages: [{ role: "user", content: "hi" }] });
  // @ts-expect-error: neither model nor max_tokens
  tokenizer.buildContext({ slots });

  // Compaction and prompt assembly name a window too.
  const compactOptions: CompactOptions = { contextWindowMax: 4096, summarizer: async (turns) => `${turns.length} turns` };
  await memory.compact("chat-1", compactOptions);
  await memory.compact("chat-1", { model: "gpt-4o", keepRecentTokens: 100 });
  // @ts-expect-error: neither model nor contextWindowMax
  await memory.compact("chat-1", { summarizeAtTokens: 100 });
  // @ts-expect-error: compaction needs a window
  await memory.compact("chat-1");
  const promptRequest: PromptRequest = { sessionId: "chat-1", windowTokens: 2000, query: "what did I say?" };
  const prompt = await memory.prompt(promptRequest);
  await memory.prompt({ model: "gpt-4o", query: "hi", format: "anthropic" });
  use(prompt.used_tokens);
  // @ts-expect-error: neither model nor windowTokens
  await memory.prompt({ sessionId: "chat-1", query: "what did I say?" });

  // Semantic and hybrid search embed a text or take a vector; keyword ranks
  // by text; with neither, a filter-only listing.
  const query: SearchQuery = { text: "window seat", limit: 3 };
  const hits = await memory.longTerm.search(query);
  await memory.longTerm.search({ mode: "hybrid", vector: new Float32Array(8), user_id: { eq: "u1" } });
  await memory.longTerm.search({ mode: "keyword", text: "train" });
  use(hits.memories[0]?.score);
  await memory.longTerm.search({ limit: 3 });
  await memory.longTerm.search({ mode: "hybrid", topics: { any: ["travel"] } });

  const index = new VectorIndex({ dim: 8, metric: "cosine", linksMax: 16, efSearch: 64 });
  use(index.len);
}

void main();
