// LangChain.js and LangGraph.js adapters (`edgemem/langchain`): a chat
// message history on working memory, a VectorStore on long-term memory and
// a LangGraph BaseStore, each over an already-open `Memory`. Nothing here
// loads wasm; `@langchain/core` and `@langchain/langgraph-checkpoint` are
// optional peer dependencies. No top-level await, so `require()` works.
export { EdgememChatMessageHistory } from "./langchain_history.js";
export { EdgememEmbeddings, EdgememVectorStore, edgememEmbedder } from "./langchain_vectorstore.js";
export { EdgememStore } from "./langchain_store.js";
