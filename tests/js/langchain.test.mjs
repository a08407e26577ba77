// edgemem/langchain against the real @langchain/core and LangGraph.js
// classes: the chat history (compaction visible as a summary message), the
// VectorStore and its retriever (filters, hybrid and keyword search), and
// LangGraph's BaseStore in a graph that remembers across threads. No network.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Memory, EdgememError } from "edgemem";
import { EdgememChatMessageHistory, EdgememEmbeddings, EdgememStore, EdgememVectorStore, edgememEmbedder } from "edgemem/langchain";
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { VectorStore, VectorStoreRetriever } from "@langchain/core/vectorstores";
import { Embeddings } from "@langchain/core/embeddings";
import { Document } from "@langchain/core/documents";
import { AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { FakeChatModel } from "@langchain/core/utils/testing";
import { BaseStore, InMemoryStore } from "@langchain/langgraph-checkpoint";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

async function rejectsWith(promise, code) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof EdgememError, `expected EdgememError, got ${err?.stack ?? err}`);
    assert.equal(err.code, code, err.message);
    return true;
  });
}

function throwsWith(fn, code) {
  assert.throws(fn, (err) => err instanceof EdgememError && err.code === code);
}

function turns(n, from = 0) {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    const content = `Turn ${i}: parcel P-${i} goes to Porto on day ${i % 28}.`;
    return i % 2 ? new AIMessage(content) : new HumanMessage(content);
  });
}

const summarizer = async (old, previous) => `${previous ? previous + " " : ""}Summary of ${old.length} turns about parcels.`;

test("the adapters are the real LangChain and LangGraph classes", async () => {
  const memory = await Memory.open();
  const history = new EdgememChatMessageHistory({ memory, sessionId: "s" });
  assert.ok(history instanceof BaseListChatMessageHistory);
  const store = new EdgememVectorStore(memory);
  assert.ok(store instanceof VectorStore);
  assert.ok(store.embeddings instanceof Embeddings);
  assert.ok(store.embeddings instanceof EdgememEmbeddings);
  assert.deepEqual(store.lc_namespace, ["langchain", "vectorstores", "edgemem"], "the namespace names the store type (a literal before fields exist)");
  assert.ok(store.asRetriever() instanceof VectorStoreRetriever);
  assert.ok(new EdgememStore(memory) instanceof BaseStore);
  throwsWith(() => new EdgememVectorStore({}), "invalid_input");
  throwsWith(() => new EdgememChatMessageHistory({ memory: null, sessionId: "s" }), "invalid_input");
  throwsWith(() => new EdgememStore(undefined), "invalid_input");
});

test("chat history: a batch is one append, roles and ids round-trip, clear deletes the session", async () => {
  const memory = await Memory.open();
  let appends = 0;
  const append = memory.appendMessages;
  memory.appendMessages = (...args) => {
    appends++;
    return append.apply(memory, args);
  };
  const history = new EdgememChatMessageHistory({ memory, sessionId: "chat-1", userId: "alice" });
  assert.deepEqual(await history.getMessages(), [], "no session yet: no messages");
  await history.addMessages([
    new SystemMessage("You are terse."),
    new HumanMessage({ content: "What is 2+2?", id: "h1" }),
    new AIMessage({ content: "Calling the calculator.", id: "a1" }),
    new ToolMessage({ content: "4", tool_call_id: "call_42" }),
    new ChatMessage({ content: "Looks right.", role: "critic" }),
  ]);
  assert.equal(appends, 1, "one appendMessages call for the batch");
  await history.addUserMessage("Thanks");
  await history.addAIMessage("You're welcome.");
  const msgs = await history.getMessages();
  assert.deepEqual(
    msgs.map((m) => [m.type, m.content]),
    [
      ["system", "You are terse."],
      ["human", "What is 2+2?"],
      ["ai", "Calling the calculator."],
      ["tool", "4"],
      ["generic", "Looks right."],
      ["human", "Thanks"],
      ["ai", "You're welcome."],
    ],
  );
  assert.equal(msgs[1].id, "h1");
  assert.equal(msgs[3].tool_call_id, "call_42", "a tool result keeps its tool_call_id");
  assert.equal(msgs[4].role, "critic");
  const session = await memory.getSession("chat-1");
  assert.equal(session.user_id, "alice", "the session was created for the user");
  assert.equal(session.messages.length, 7);
  await history.clear();
  assert.equal(await memory.getSession("chat-1"), null);
  assert.deepEqual(await history.getMessages(), []);
  await history.addUserMessage("Back again");
  assert.equal((await history.getMessages()).length, 1, "the session is created again after clear");
});

test("chat history: compaction is visible as a leading summary message and fewer turns", async () => {
  const memory = await Memory.open();
  const history = new EdgememChatMessageHistory({ memory, sessionId: "long", contextWindowMax: 1000, summarizer });
  await history.addMessages(turns(80));
  const msgs = await history.getMessages();
  assert.ok(msgs[0] instanceof SystemMessage);
  assert.deepEqual(msgs[0].additional_kwargs.edgemem, { summary: true });
  assert.match(msgs[0].content, /^Summary of \d+ turns about parcels\.$/);
  assert.ok(msgs.length - 1 < 80, `fewer turns kept (${msgs.length - 1})`);
  assert.match(msgs.at(-1).content, /^Turn 79:/, "the newest turns stay verbatim");
  const archived = await memory.archivedMessages("long", { limit: 100 });
  assert.equal(archived.total + msgs.length - 1, 80, "every compacted turn is archived");
  // Reading the history and writing it back does not store the summary as a turn.
  await history.addMessages([msgs[0], new HumanMessage("Where does P-80 go?")]);
  const after = await history.getMessages();
  assert.equal(after.filter((m) => m.additional_kwargs?.edgemem?.summary).length, 1);
  assert.equal(after.at(-1).content, "Where does P-80 go?");

  // Without a window nothing compacts on its own; compact() does it on demand.
  const manual = new EdgememChatMessageHistory({ memory, sessionId: "manual" });
  await manual.addMessages(turns(80));
  assert.equal((await manual.getMessages()).length, 80);
  const r = await manual.compact({ contextWindowMax: 1000, summarizer });
  assert.equal(r.compacted, true);
  const compacted = await manual.getMessages();
  assert.equal(compacted[0].additional_kwargs.edgemem.summary, true);
  assert.ok(compacted.length < 80);

  // A failing summarizer loses nothing and is reported, not thrown.
  const failing = new EdgememChatMessageHistory({ memory, sessionId: "failing", contextWindowMax: 1000, summarizer: async () => { throw new Error("model down"); } });
  await failing.addMessages(turns(80));
  assert.equal(failing.compactionError?.code, "hook_failed");
  assert.equal((await failing.getMessages()).length, 80);
});

test("chat history: bad input gets typed errors", async () => {
  const memory = await Memory.open();
  throwsWith(() => new EdgememChatMessageHistory({ memory, sessionId: 42 }), "invalid_input");
  const bad = new EdgememChatMessageHistory({ memory, sessionId: "a/b" });
  await rejectsWith(bad.addUserMessage("hi"), "invalid_input");
  await rejectsWith(bad.getMessages(), "invalid_input");
  const history = new EdgememChatMessageHistory({ memory, sessionId: "ok" });
  await rejectsWith(history.addMessages("hi"), "invalid_input");
  await rejectsWith(history.addMessages([{ content: "not a message" }]), "invalid_input");
  await history.addMessages([new HumanMessage({ content: "one", id: "dup" })]);
  await rejectsWith(history.addMessages([new HumanMessage({ content: "two", id: "dup" })]), "invalid_input");
});

const DOCS = [
  new Document({ pageContent: "Alice drinks oolong tea every morning.", metadata: { user_id: "alice", topics: ["drinks"], source: "chat", page: 3 } }),
  new Document({ pageContent: "Alice's bicycle is a red Gazelle.", metadata: { user_id: "alice", topics: ["bikes"], source: "chat" } }),
  new Document({ pageContent: "Bob drinks espresso, never tea.", metadata: { user_id: "bob", topics: ["drinks"], entities: ["Bob"] } }),
  new Document({ pageContent: "The warehouse in Porto ships parcels on Tuesdays.", metadata: { memory_type: "episodic", session_id: "s-9" } }),
];

test("VectorStore: documents become records, metadata round-trips, filters and modes reach the search", async () => {
  const memory = await Memory.open();
  const store = new EdgememVectorStore(memory);
  const ids = await store.addDocuments(DOCS);
  assert.equal(ids.length, 4);
  const rec = await memory.longTerm.get(ids[0]);
  assert.equal(rec.user_id, "alice");
  assert.deepEqual(rec.topics, ["drinks"]);
  assert.deepEqual(rec.metadata, { source: "chat", page: 3 }, "other metadata is kept on the record");
  assert.equal((await memory.longTerm.get(ids[3])).memory_type, "episodic");

  const [top] = await store.similaritySearch("what tea does Alice drink", 1);
  assert.equal(top.pageContent, DOCS[0].pageContent);
  assert.equal(top.id, ids[0]);
  assert.deepEqual(top.metadata, { source: "chat", page: 3, id: ids[0], topics: ["drinks"], user_id: "alice", memory_type: "message" });

  const bobs = await store.similaritySearchWithScore("tea", 4, { user_id: { eq: "bob" } });
  assert.deepEqual(bobs.map(([d]) => d.metadata.user_id), ["bob"]);
  assert.equal(typeof bobs[0][1], "number");
  const drinks = await store.similaritySearch("drinks", 4, { topics: { any: ["drinks"] }, mode: "keyword" });
  assert.deepEqual(drinks.map((d) => d.metadata.user_id).sort(), ["alice", "bob"]);

  // The retriever: the inherited asRetriever, with a filter and in hybrid mode.
  const retriever = store.asRetriever({ k: 2, filter: { user_id: { eq: "alice" }, mode: "hybrid" } });
  assert.ok(retriever instanceof VectorStoreRetriever);
  const docs = await retriever.invoke("red bicycle");
  assert.ok(docs.length >= 1 && docs.every((d) => d.metadata.user_id === "alice"));
  assert.equal(docs[0].pageContent, DOCS[1].pageContent);
  const hybrid = new EdgememVectorStore(memory, { mode: "hybrid", hybridAlpha: 0.5, filter: { memory_type: { eq: "episodic" } } });
  const [porto] = await hybrid.asRetriever(3).invoke("when are parcels shipped from Porto");
  assert.equal(porto.metadata.session_id, "s-9");
  assert.equal((await hybrid.asRetriever(3).invoke("tea")).length, 1, "the store's own filter applies to every search");

  await store.delete({ ids: [ids[2]] });
  assert.equal(await memory.longTerm.get(ids[2]), null);
  await rejectsWith(store.similaritySearch("tea", 1000), "invalid_input");
  await rejectsWith(store.similaritySearch("tea", 2, { user_id: { like: "a" } }), "invalid_input");
});

test("VectorStore: fromTexts and fromDocuments, ids and deduplication", async () => {
  const memory = await Memory.open();
  const store = await EdgememVectorStore.fromTexts(["Carol plays the cello.", "Dan plays the drums."], [{ user_id: "carol" }, { user_id: "dan" }], undefined, { memory, mode: "keyword" });
  assert.ok(store instanceof EdgememVectorStore);
  const [hit] = await store.similaritySearch("cello", 1);
  assert.equal(hit.metadata.user_id, "carol");
  const other = await EdgememVectorStore.fromDocuments([new Document({ pageContent: "Erin sails.", id: "erin-1" })], null, { memory });
  assert.equal((await memory.longTerm.get("erin-1")).text, "Erin sails.", "a document id is the record id");
  assert.deepEqual(await other.addDocuments([new Document({ pageContent: "Frank hikes." })], { ids: ["frank-1"] }), ["frank-1"]);
  assert.equal((await other.addDocuments([new Document({ pageContent: "Frank hikes." })])).length, 1, "no deduplication by default");
  assert.equal((await other.addDocuments([new Document({ pageContent: "Frank hikes." })], { deduplicate: true })).length, 0);
});

test("VectorStore: vector paths use the Memory's own embedder; without one they refuse", async () => {
  const dims = 8;
  // A toy embedder: letter counts, folded into 8 dimensions.
  const embed = async (texts) =>
    texts.map((t) => {
      const v = new Float32Array(dims);
      for (const c of t.toLowerCase()) if (c >= "a" && c <= "z") v[(c.charCodeAt(0) - 97) % dims] += 1;
      return v;
    });
  const memory = await Memory.open({ embedder: embed, embedderName: "toy-letters" });
  const store = new EdgememVectorStore(memory, { embedder: embed });
  const [vec] = await store.embeddings.embedDocuments(["zebra"]);
  assert.equal(vec.length, dims);
  const ids = await store.addVectors(await store.embeddings.embedDocuments(["zebra zoo", "apple pie"]), [new Document({ pageContent: "zebra zoo" }), new Document({ pageContent: "apple pie" })]);
  assert.equal(ids.length, 2);
  const [[doc, score]] = await store.similaritySearchVectorWithScore(await store.embeddings.embedQuery("zebra"), 1);
  assert.equal(doc.pageContent, "zebra zoo");
  assert.ok(score > 0);
  // The text path embeds with the same function, so both agree.
  assert.equal((await store.similaritySearch("zebra", 1))[0].pageContent, "zebra zoo");

  // LangChain embeddings can be the Memory's embedder too.
  const fromLc = edgememEmbedder(store.embeddings, { name: "toy-letters" });
  assert.equal(fromLc.edgememName, "toy-letters");
  assert.ok((await fromLc(["abc"]))[0] instanceof Float32Array);

  const plain = new EdgememVectorStore(await Memory.open());
  await rejectsWith(plain.embeddings.embedQuery("x"), "invalid_input");
  await rejectsWith(plain.addVectors([[1, 2]], []), "invalid_input");
});

test("EdgememStore: get, put, delete and search as LangGraph's BaseStore", async () => {
  const memory = await Memory.open();
  const store = new EdgememStore(memory);
  const value = { z: 1, a: { nested: [1, "two", null, { deep: true }] }, text: "likes oolong tea", neg: -0.5 };
  await store.put(["memories", "u1"], "fav-tea", value);
  const item = await store.get(["memories", "u1"], "fav-tea");
  assert.deepEqual(item.value, value);
  assert.deepEqual(Object.keys(item.value), ["z", "a", "text", "neg"], "the value round-trips exactly, key order too");
  assert.deepEqual(item.namespace, ["memories", "u1"]);
  assert.equal(item.key, "fav-tea");
  assert.ok(item.createdAt instanceof Date && item.updatedAt instanceof Date);

  const id = await EdgememStore.recordId(["memories", "u1"], "fav-tea");
  assert.match(id, /^lg_[0-9a-f]{64}$/);
  const record = await memory.longTerm.get(id);
  assert.deepEqual(record.topics, ["lg:memories/u1/"]);
  assert.equal(record.text, "two\nlikes oolong tea", "the text is every string in the value");

  await new Promise((r) => setTimeout(r, 5));
  await store.put(["memories", "u1"], "fav-tea", { text: "likes sencha now" });
  const updated = await store.get(["memories", "u1"], "fav-tea");
  assert.equal(updated.value.text, "likes sencha now");
  assert.equal(updated.createdAt.getTime(), item.createdAt.getTime(), "an update keeps createdAt");
  assert.ok(updated.updatedAt > item.updatedAt);

  await store.put(["memories", "u1"], "bike", { text: "rides a red bicycle", kind: "hobby" }, ["text"]);
  await store.put(["memories", "u10"], "x", { text: "tea in another namespace" });
  await store.put(["memories", "u1", "deep"], "y", { text: "deeper tea", kind: "hobby" });
  const hits = await store.search(["memories", "u1"], { query: "what tea" });
  assert.ok(hits.length >= 1);
  assert.ok(hits.every((h) => h.namespace[0] === "memories" && h.namespace[1] === "u1"), "u10 is not under the prefix u1");
  assert.equal(typeof hits[0].score, "number");
  const hobbies = await store.search(["memories"], { filter: { kind: "hobby" } });
  assert.deepEqual(hobbies.map((h) => h.key).sort(), ["bike", "y"]);
  assert.deepEqual((await store.search(["memories"], { filter: { kind: { $ne: "hobby" } } })).map((h) => h.key).sort(), ["fav-tea", "x"]);
  assert.equal((await store.search([], { limit: 2 })).length, 2);
  assert.equal((await store.search(["nothing"])).length, 0);

  await store.delete(["memories", "u1"], "bike");
  assert.equal(await store.get(["memories", "u1"], "bike"), null);
  assert.equal(await memory.longTerm.get(await EdgememStore.recordId(["memories", "u1"], "bike")), null, "put(null) deletes the record");
  assert.equal(await store.get(["memories", "u1"], "never"), null);
});

test("EdgememStore: batches, namespace listing, odd labels and bounds", async () => {
  const memory = await Memory.open();
  const store = new EdgememStore(memory);
  const ops = [];
  for (let i = 0; i < 130; i++) ops.push({ namespace: ["docs", `team${i % 3}`, i % 2 ? "odd" : "even"], key: `k${i}`, value: { n: i, text: `note number ${i}` } });
  ops.push({ namespace: ["docs", "team0", "even"], key: "k0" });
  ops.push({ namespace: ["docs", "team0", "even"], key: "k0", value: null });
  ops.push({ namespace: ["docs", "team0", "even"], key: "k0" });
  const results = await store.batch(ops);
  assert.equal(results[130].value.n, 0, "a get sees the puts before it");
  assert.equal(results[132], null, "and the delete before it");

  const all = await store.search(["docs"], { limit: 100, offset: 0 });
  assert.equal(all.length, 100);
  const rest = await store.search(["docs"], { limit: 100, offset: 100 });
  assert.equal(rest.length, 29, "a listing pages past the search's 100");
  assert.equal(new Set([...all, ...rest].map((i) => i.key)).size, 129);
  assert.deepEqual((await store.search(["docs"], { filter: { n: { $gte: 127 } } })).map((i) => i.value.n).sort(), [127, 128, 129]);

  assert.deepEqual(await store.listNamespaces({ prefix: ["docs"], maxDepth: 2 }), [
    ["docs", "team0"],
    ["docs", "team1"],
    ["docs", "team2"],
  ]);
  assert.deepEqual(await store.listNamespaces({ suffix: ["odd"], prefix: ["docs", "*", "odd"], limit: 2 }), [
    ["docs", "team0", "odd"],
    ["docs", "team1", "odd"],
  ]);
  assert.equal((await store.listNamespaces()).length, 6);

  // Labels with the topic's separators, commas and upper case stay apart.
  await store.put(["a/b", "c,d"], "k", { text: "slash and comma" });
  await store.put(["a", "b"], "k", { text: "plain" });
  await store.put(["A", "B"], "k", { text: "upper" });
  assert.equal((await store.get(["a/b", "c,d"], "k")).value.text, "slash and comma");
  assert.deepEqual((await store.search(["a"])).map((i) => i.value.text), ["plain"]);
  assert.deepEqual((await store.search(["A"])).map((i) => i.value.text), ["upper"]);

  // Bounds and bad input: typed errors.
  await rejectsWith(store.search(["docs"], { query: "note", limit: 60, offset: 50 }), "invalid_input");
  await rejectsWith(store.search(["docs"], { limit: 101 }), "invalid_input");
  await rejectsWith(store.batch([{ namespace: ["docs"], key: "big", value: { blob: "x".repeat(20_000) } }]), "payload_too_large");
  await rejectsWith(store.batch([{ namespace: ["docs"], key: "cyclic", value: (() => { const o = {}; o.self = o; return o; })() }]), "invalid_input");
  await rejectsWith(store.batch([{ bogus: true }]), "invalid_input");
});

test("EdgememStore: userId scopes every item to one user", async () => {
  const memory = await Memory.open();
  const alice = new EdgememStore(memory, { userId: "alice" });
  const bob = new EdgememStore(memory, { userId: "bob" });
  await alice.put(["prefs"], "tea", { text: "oolong" });
  await bob.put(["prefs"], "coffee", { text: "espresso" });
  assert.deepEqual((await alice.search(["prefs"])).map((i) => i.key), ["tea"]);
  assert.deepEqual((await bob.search(["prefs"], { query: "oolong" })).map((i) => i.key), ["coffee"]);
  assert.equal((await memory.longTerm.get(await EdgememStore.recordId(["prefs"], "tea"))).user_id, "alice");
});

test("LangGraph: a StateGraph with MemorySaver and EdgememStore remembers across threads", async () => {
  const memory = await Memory.open();
  const store = new EdgememStore(memory);
  const model = new FakeChatModel({});
  const agent = async (state, config) => {
    const userId = config.configurable.userId;
    const namespace = ["memories", userId];
    const last = state.messages.at(-1).content;
    const remember = /^remember (.+)$/i.exec(last);
    if (remember) await config.store.put(namespace, `fact-${Date.now()}`, { fact: remember[1] });
    const found = await config.store.search(namespace, { query: last, limit: 3 });
    const system = new SystemMessage(`Facts about the user: ${found.map((i) => i.value.fact).join("; ") || "none"}`);
    return { messages: [await model.invoke([system, ...state.messages])] };
  };
  const graph = new StateGraph(MessagesAnnotation).addNode("agent", agent).addEdge(START, "agent").addEdge("agent", END).compile({ checkpointer: new MemorySaver(), store });

  await graph.invoke({ messages: [new HumanMessage("Remember my favourite tea is oolong")] }, { configurable: { thread_id: "t1", userId: "u1" } });
  const t2 = await graph.invoke({ messages: [new HumanMessage("Which tea should I brew?")] }, { configurable: { thread_id: "t2", userId: "u1" } });
  assert.equal(t2.messages.length, 2, "thread t2 starts empty: the checkpointer keeps threads apart");
  assert.match(t2.messages.at(-1).content, /favourite tea is oolong/, "the store carries the fact from t1 to t2");

  const other = await graph.invoke({ messages: [new HumanMessage("Which tea should I brew?")] }, { configurable: { thread_id: "t3", userId: "u2" } });
  assert.doesNotMatch(other.messages.at(-1).content, /oolong/, "another user's namespace holds nothing");
  assert.match(other.messages.at(-1).content, /Facts about the user: none/);

  const again = await graph.invoke({ messages: [new HumanMessage("And a snack?")] }, { configurable: { thread_id: "t1", userId: "u1" } });
  assert.equal(again.messages.length, 4, "thread t1 kept its own history");

  // Same behaviour as LangGraph's own InMemoryStore for the same calls.
  const ref = new InMemoryStore();
  for (const s of [ref, store]) await s.put(["cmp"], "k", { fact: "x" });
  assert.deepEqual((await store.get(["cmp"], "k")).value, (await ref.get(["cmp"], "k")).value);
});
