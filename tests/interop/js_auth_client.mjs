// Run with node, in a folder whose node_modules has @a2a-js/sdk (tests/test_interop_js_auth.py does).
//
// The official JavaScript SDK's 1.0 client calls one of our served peers behind any scheme
// `serve --auth` declares, as a stranger would: it resolves the card, prints each scheme
// ("scheme NAME CASE"), sends once without a credential (and prints how the SDK reads the
// refusal: "refused send ERROR-CLASS CODE REASON"), then once with the credential the card
// asks for, and prints each event's kind (with --stream) and the text it got back.
// The credential goes the SDK's own way, `createAuthenticatingFetchWithRetry` with an
// AuthenticationHandler whose headers() reads the card: an API key in the header the scheme
// names; HTTP Basic base64(USER:PASSWORD); oauth2 a Bearer token got with client credentials
// from the scheme's tokenUrl, openIdConnect the same from the discovery document's
// token_endpoint ("token from URL"). Mutual TLS is no header: the SDK takes any fetch
// (`fetchImpl`), and the one below is node:https with the client certificate (`--client-cert
// CERT KEY`) and the CA (`--ca FILE`) that issued the server's, since Node's own fetch takes
// neither without undici's Agent, which is not an importable module of node itself.
// Each A2A request prints "header NAMES" (the credential headers it carried, names only).
// Usage:
//     node js_auth_client.mjs BASE_URL CREDENTIAL BINDING "refund 42 on ORD-42" [--stream]
//                             [--ca FILE] [--client-cert CERT KEY]
// where CREDENTIAL is the API key, USER:PASSWORD, CLIENT-ID:CLIENT-SECRET, or - (mtls).
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import https from "node:https";
import path from "node:path";
import { Readable } from "node:stream";

// The SDK is resolved from the working directory (the folder that has it), not from here.
const require = createRequire(path.join(process.cwd(), "noop.js"));
const load = (name) => import(require.resolve(name));
const { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory,
        createAuthenticatingFetchWithRetry } = await load("@a2a-js/sdk/client");
const { Role } = await load("@a2a-js/sdk");

const [baseUrl, secret, binding, text, ...flags] = process.argv.slice(2);
const option = (name, count = 1) => (flags.includes(name) ? flags.slice(flags.indexOf(name) + 1,
                                                                        flags.indexOf(name) + 1 + count) : undefined);
const [caFile] = option("--ca") ?? [];
const certificate = option("--client-cert", 2);

// fetch over node:https, trusting `ca` and presenting `cert`: a Response the SDK reads as
// it reads fetch's own, its body streamed (a server-sent stream arrives event by event).
function httpsFetch(tls) {
  return (url, init = {}) => new Promise((resolve, reject) => {
    const request = https.request(String(url), { method: init.method ?? "GET", ...tls,
                                                 headers: Object.fromEntries(new Headers(init.headers ?? {})) },
                                  (response) => {
      const headers = new Headers();
      for (let i = 0; i < response.rawHeaders.length; i += 2) headers.append(response.rawHeaders[i], response.rawHeaders[i + 1]);
      const empty = [204, 304].includes(response.statusCode) || init.method === "HEAD";
      resolve(new Response(empty ? null : Readable.toWeb(response), { status: response.statusCode,
                                                                      statusText: response.statusMessage, headers }));
    });
    request.on("error", reject);
    init.signal?.addEventListener("abort", () => request.destroy(init.signal.reason));
    request.end(init.body ?? undefined);
  });
}
const ca = caFile ? readFileSync(caFile) : undefined;
const plainFetch = ca ? httpsFetch({ ca }) : fetch;
const presentingFetch = ca && certificate
  ? httpsFetch({ ca, cert: readFileSync(certificate[0]), key: readFileSync(certificate[1]) }) : plainFetch;

const card = await new DefaultAgentCardResolver({ fetchImpl: plainFetch }).resolve(baseUrl);
for (const [name, scheme] of Object.entries(card.securitySchemes ?? {})) console.log("scheme", name, scheme.scheme?.$case);

// The credential each scheme the card requires takes, as its headers; a token is got once.
const tokens = {};
async function tokenFrom(scheme, name) {
  if (!tokens[name]) {
    const tokenUrl = scheme.$case === "oauth2SecurityScheme" ? scheme.value.flows.flow.value.tokenUrl
      : (await (await plainFetch(scheme.value.openIdConnectUrl)).json()).token_endpoint;
    const [id, ...rest] = secret.split(":");
    const answer = await plainFetch(tokenUrl, {
      method: "POST", body: "grant_type=client_credentials",
      headers: { "Content-Type": "application/x-www-form-urlencoded",
                 Authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(rest.join(":"))}`).toString("base64")}` } });
    if (!answer.ok) {
      throw Object.assign(new Error(`the token endpoint answered ${answer.status}`), { name: "TokenRefused",
                                                                                      statusCode: answer.status });
    }
    tokens[name] = (await answer.json()).access_token;
    console.log("token from", tokenUrl);
  }
  return tokens[name];
}
const fromCard = {
  async headers() {
    for (const requirement of card.securityRequirements ?? []) {
      for (const name of Object.keys(requirement.schemes ?? {})) {
        const scheme = card.securitySchemes?.[name]?.scheme;
        if (scheme?.$case === "apiKeySecurityScheme" && scheme.value.location === "header") return { [scheme.value.name]: secret };
        if (scheme?.$case === "httpAuthSecurityScheme" && scheme.value.scheme.toLowerCase() === "basic") {
          return { Authorization: `Basic ${Buffer.from(secret).toString("base64")}` };
        }
        if (scheme?.$case === "oauth2SecurityScheme" || scheme?.$case === "openIdConnectSecurityScheme") {
          return { Authorization: `Bearer ${await tokenFrom(scheme, name)}` };
        }
        if (scheme?.$case === "mtlsSecurityScheme") return {};  // the handshake carries it
      }
    }
    return {};
  },
  async shouldRetryWithHeaders() {
    return undefined;
  },
};

// Says which credential headers went with each A2A request (names only), then sends it.
const showing = (fetchImpl) => (url, init = {}) => {
  const sent = ["authorization", "x-api-key"].filter((name) => new Headers(init.headers ?? {}).has(name));
  console.log("header", sent.join(",") || "none");
  return fetchImpl(url, init);
};
const clientWith = (fetchImpl) => new ClientFactory({ transports: [binding === "HTTP+JSON"
  ? new RestTransportFactory({ fetchImpl }) : new JsonRpcTransportFactory({ fetchImpl })] }).createFromAgentCard(card);
const request = () => ({
  message: { messageId: `js-${Date.now()}-${Math.random()}`, role: Role.ROLE_USER,
             parts: [{ content: { $case: "text", value: text } }] },
});
const texts = (artifacts) => (artifacts || []).flatMap((a) => a.parts).filter((p) => p.content?.$case === "text")
  .map((p) => p.content.value);

for (const client of [await clientWith(showing(plainFetch)),
                      await clientWith(createAuthenticatingFetchWithRetry(showing(presentingFetch), fromCard))]) {
  try {
    let found = [];
    if (flags.includes("--stream")) {
      for await (const event of client.sendMessageStream(request())) {
        const kind = event.payload?.$case;
        console.log("event", kind);
        if (kind === "artifactUpdate") found.push(...texts([event.payload.value.artifact]));
      }
    } else {
      found = texts((await client.sendMessage(request())).artifacts);
    }
    console.log("text", found.join(""));
  } catch (error) {  // JSON-RPC: the envelope's code and its ErrorInfo; HTTP+JSON: the status; TLS: its code
    const reason = (error.data || []).find((detail) => detail["@type"]?.endsWith("google.rpc.ErrorInfo"))?.reason;
    console.log("refused send", error.name, error.envelopeCode ?? error.statusCode ?? error.code ?? error.cause?.code,
                reason ?? "-");
  }
}
