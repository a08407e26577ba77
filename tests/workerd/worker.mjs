// A user's Worker that imports the npm package, as a consumer would: wrangler
// resolves "edgemem" through the package's `workerd` export condition.
import { Memory, DurableObjectStore, EdgememError, Tokenizer, version } from "edgemem";
import { DurableObject } from "cloudflare:workers";

export class Agent extends DurableObject {
  async fetch(request) {
    const memory = await Memory.open({ store: new DurableObjectStore(this.ctx.storage), snapshotEveryOps: 5 });
    const url = new URL(request.url);
    try {
      if (request.method === "POST") {
        const { content } = await request.json();
        await memory.getOrCreateSession("chat");
        const s = await memory.appendMessages("chat", [{ role: "user", content }]);
        return Response.json({ count: s.message_count });
      }
      if (url.pathname === "/bad") {
        await memory.putSession("chat", { ttl_seconds: -5 });
      }
      const s = await memory.getSession("chat");
      const messages = s ? s.messages.map((m) => m.content) : [];
      // The rank asset loads lazily as a bundled Data module.
      const tokenizer = await Tokenizer.load("cl100k_base");
      return Response.json({ version: version(), messages, tokens: tokenizer.count(messages.join(" ")) });
    } catch (err) {
      if (err instanceof EdgememError) return Response.json({ code: err.code }, { status: 422 });
      throw err;
    } finally {
      memory.free();
    }
  }
}

export default {
  async fetch(request, env) {
    return env.AGENT.get(env.AGENT.idFromName("one")).fetch(request);
  },
};
