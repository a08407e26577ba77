// edgemem in a LangGraph.js agent, offline: long-term memory through
// EdgememStore (shared by every thread of a user), the conversation through
// EdgememChatMessageHistory (working memory, compacted into a summary), and
// the long-term records through EdgememVectorStore's retriever.
//
//   make pkg && node examples/langgraph.mjs
//
// The model is LangChain's FakeChatModel, which echoes its input, so the
// script needs no network or API key: swap in a real chat model to use it.
import { Memory } from "edgemem";
import { EdgememChatMessageHistory, EdgememStore, EdgememVectorStore } from "edgemem/langchain";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { FakeChatModel } from "@langchain/core/utils/testing";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

const memory = await Memory.open(); // volatile; pass { store } to persist
const model = new FakeChatModel({});

// 1. A graph whose node recalls and records facts in the user's namespace.
async function agent(state, config) {
  const namespace = ["memories", config.configurable.userId];
  const question = state.messages.at(-1).content;
  const fact = /^remember (.+)$/i.exec(question);
  if (fact) await config.store.put(namespace, crypto.randomUUID(), { fact: fact[1] });
  const recalled = await config.store.search(namespace, { query: question, limit: 3 });
  const system = new SystemMessage(`Known about the user: ${recalled.map((i) => i.value.fact).join("; ") || "nothing yet"}`);
  return { messages: [await model.invoke([system, ...state.messages])] };
}

const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", agent)
  .addEdge(START, "agent")
  .addEdge("agent", END)
  .compile({ checkpointer: new MemorySaver(), store: new EdgememStore(memory) });

const ask = async (thread, userId, text) => {
  const out = await graph.invoke({ messages: [new HumanMessage(text)] }, { configurable: { thread_id: thread, userId } });
  console.log(`[${thread}] ${userId}: ${text}\n  -> ${out.messages.at(-1).content.split("\n")[0]}`);
};
await ask("t1", "ada", "Remember I take my tea without sugar");
await ask("t2", "ada", "How do I like my tea?"); // another thread, same user: recalled
await ask("t3", "bob", "How do I like my tea?"); // another user: nothing

// 2. The conversation as a LangChain chat history on working memory: past
// the window it compacts, and the summary comes back as the first message.
const history = new EdgememChatMessageHistory({ memory, sessionId: "ada-chat", userId: "ada", contextWindowMax: 600 });
for (let i = 0; i < 30; i++) {
  await history.addMessages([new HumanMessage(`Question ${i}: where is parcel P-${i}?`), await model.invoke(`Parcel P-${i} is in Porto, shelf ${i % 7}.`)]);
}
const messages = await history.getMessages();
const summary = messages[0].additional_kwargs?.edgemem?.summary ? messages[0] : null;
console.log(`\nhistory: ${messages.length} messages (60 added), summary first: ${summary ? JSON.stringify(summary.content.slice(0, 80)) + "..." : "none"}`);

// 3. The same long-term memory as a VectorStore and retriever (hybrid search, filtered).
const vectors = new EdgememVectorStore(memory, { mode: "hybrid" });
await vectors.addDocuments([
  { pageContent: "Ada's office is in the Porto warehouse.", metadata: { user_id: "ada", topics: ["work"] } },
  { pageContent: "Bob's office is in Lisbon.", metadata: { user_id: "bob", topics: ["work"] } },
]);
const docs = await vectors.asRetriever({ k: 2, filter: { user_id: { eq: "ada" } } }).invoke("where is the office?");
console.log(`\nretriever for ada: ${docs.map((d) => d.pageContent).join(" | ")}`);

memory.free();
