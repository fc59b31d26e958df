// Run with node, in a folder whose node_modules has @a2a-js/sdk (tests/test_interop_js.py does).
//
// The official JavaScript SDK's 1.0 client calls one of our served peers over one binding
// only (JSONRPC or HTTP+JSON, as the card lists it): it resolves the card, sends a text
// message with the bearer token, and prints each event's kind (with --stream) and the
// text it got back. With --refused it sends TOKEN as it is (none if ""), asks for the message
// and for the extended card (getAgentCard fetches it where the card declares one), and
// prints how the SDK reads each refusal: "refused OPERATION ERROR-CLASS CODE REASON". Usage:
//     node js_client.mjs BASE_URL TOKEN BINDING "refund 42 on ORD-42" [--stream | --refused]
import { createRequire } from "node:module";
import path from "node:path";

// The SDK is resolved from the working directory (the folder that has it), not from here.
const require = createRequire(path.join(process.cwd(), "noop.js"));
const load = (name) => import(require.resolve(name));
const { ClientFactory, JsonRpcTransportFactory, RestTransportFactory } = await load("@a2a-js/sdk/client");
const { Role } = await load("@a2a-js/sdk");

const [baseUrl, token, binding, text, ...flags] = process.argv.slice(2);
const fetchImpl = (url, init = {}) =>
  fetch(url, { ...init, headers: { ...(init.headers || {}), ...(token ? { Authorization: `Bearer ${token}` } : {}) } });
const transport = binding === "HTTP+JSON" ? new RestTransportFactory({ fetchImpl })
                                           : new JsonRpcTransportFactory({ fetchImpl });
const factory = new ClientFactory({ transports: [transport] });
const client = await factory.createFromUrl(baseUrl);
const request = {
  message: { messageId: `js-${Date.now()}`, role: Role.ROLE_USER, parts: [{ content: { $case: "text", value: text } }] },
};
const texts = (artifacts) => (artifacts || []).flatMap((a) => a.parts).filter((p) => p.content?.$case === "text")
  .map((p) => p.content.value);
let found = [];
if (flags.includes("--refused")) {
  for (const [operation, call] of [["send", () => client.sendMessage(request)], ["card", () => client.getAgentCard()]]) {
    try {
      await call();
      console.log("accepted", operation);
    } catch (error) {  // JSON-RPC: the envelope's code and its ErrorInfo; HTTP+JSON: the status
      const reason = (error.data || []).find((detail) => detail["@type"]?.endsWith("google.rpc.ErrorInfo"))?.reason;
      console.log("refused", operation, error.name, error.envelopeCode ?? error.statusCode, reason ?? "-");
    }
  }
  process.exit(0);
}
if (flags.includes("--stream")) {
  for await (const event of client.sendMessageStream(request)) {
    const kind = event.payload?.$case;
    console.log("event", kind);
    if (kind === "artifactUpdate") found.push(...texts([event.payload.value.artifact]));
  }
} else {
  const answer = await client.sendMessage(request);
  found = texts(answer.artifacts);
}
console.log("text", found.join(""));
