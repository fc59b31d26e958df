// Run with node, from a folder whose node_modules has @a2a-js/sdk and express
// (tests/test_interop_js.py does: NODE_PATH is not read for ES modules, so it is run with
// that folder as its working directory and imports resolved from there).
//
// An A2A 1.0 agent built with the official JavaScript SDK that takes its time, so that a
// caller who does not hold the connection open (--no-wait, --push) really has to follow
// the task: `slow-refunds-js` declares streaming and push notifications, keeps push
// configs in the SDK's InMemoryPushNotificationStore and delivers them with its
// DefaultPushNotificationSender. Its executor takes a refund request (a data part, or
// text), says the task is working, waits WORK_MS, emits one artifact, "js refund of
// <amount> for <order> (ref JS-<order>)", and completes.
//
// It binds 127.0.0.1 (PORT, or 0 for a free one) and prints "listening on BASE_URL {name,
// endpoint}" once bound. It does not check a token, cancel, or keep anything after it
// stops. `--bindings jsonrpc|rest|both` says what it serves and its card lists: jsonRpcHandler
// at /a2a (the default), restHandler at /rest, or both (JSON-RPC listed first). With
// `--no-modes` its skill sets no input or output modes, which this SDK writes as [] (proto3
// cannot tell an empty list from none): the card's defaults apply.
// With `--bearer TOKEN` its card declares an HTTP Bearer scheme and requires it, written as
// the SDK's own types spell a oneof (`scheme: {$case, value}`), the only way its AgentCard
// type takes one; every request to /a2a and /rest without `Authorization: Bearer TOKEN` is
// answered 401 (the SDK leaves checking a credential to the app: this is its express way).
// `--api-key KEY` declares an API key in the X-API-Key header instead, and `--basic
// USER:PASSWORD` HTTP Basic, each required and checked the same way.
// Usage: node js_server.mjs [PORT] [--bindings jsonrpc|rest|both] [--no-modes]
//                           [--bearer TOKEN | --api-key KEY | --basic USER:PASSWORD]
import { createRequire } from "node:module";
import path from "node:path";

// Resolved from the working directory (the SDK's folder), not from this file's folder.
const require = createRequire(path.join(process.cwd(), "noop.js"));
const load = (name) => import(require.resolve(name));
const express = (await load("express")).default;
const { TaskState } = await load("@a2a-js/sdk");
const { AgentEvent, DefaultPushNotificationSender, DefaultRequestHandler, InMemoryPushNotificationStore,
        InMemoryTaskStore } = await load("@a2a-js/sdk/server");
const { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } = await load("@a2a-js/sdk/server/express");

const NAME = "slow-refunds-js";
const RPC_PATH = "/a2a";
const REST_PATH = "/rest";
const args = process.argv.slice(2);
const option = (name, otherwise) => (args.includes(name) ? args[args.indexOf(name) + 1] : otherwise);
const BINDINGS = option("--bindings", "jsonrpc");
const NO_MODES = args.includes("--no-modes");
const BEARER = option("--bearer", undefined);
const API_KEY = option("--api-key", undefined);
const BASIC = option("--basic", undefined);
// The one scheme the card declares, as the SDK's oneof; what a request must carry; its challenge.
const SCHEME = BEARER ? { name: "bearer", $case: "httpAuthSecurityScheme", challenge: "Bearer",
                          value: { description: "", scheme: "Bearer", bearerFormat: "" },
                          carried: (req) => req.get("authorization") === `Bearer ${BEARER}` }
  : API_KEY ? { name: "apiKey", $case: "apiKeySecurityScheme", challenge: "ApiKey",
                value: { description: "", location: "header", name: "X-API-Key" },
                carried: (req) => req.get("x-api-key") === API_KEY }
  : BASIC ? { name: "basic", $case: "httpAuthSecurityScheme", challenge: 'Basic realm="slow-refunds-js"',
              value: { description: "", scheme: "Basic", bearerFormat: "" },
              carried: (req) => req.get("authorization") === `Basic ${Buffer.from(BASIC).toString("base64")}` }
  : undefined;
const JSONRPC = BINDINGS !== "rest";
const REST = BINDINGS !== "jsonrpc";
const WORK_MS = 500; // long enough that the first answer to --no-wait and --push is not the last
const MODES = ["application/json", "text/plain"];

function refundOf(message) {
  for (const part of message.parts ?? []) {
    const request = part.content?.$case === "data" ? part.content.value : undefined;
    if (request && typeof request === "object" && "order_id" in request) {
      return `js refund of ${request.amount} for ${request.order_id} (ref JS-${request.order_id})`;
    }
  }
  const text = (message.parts ?? []).filter((part) => part.content?.$case === "text")
    .map((part) => part.content.value).join(" ");
  return `js refund for: ${text || "(no text)"}`;
}

function status(state) {
  return { state, message: undefined, timestamp: new Date().toISOString() };
}

class SlowRefunds {
  async execute(context, bus) {
    const { taskId, contextId } = context;
    const result = refundOf(context.userMessage);
    bus.publish(AgentEvent.task({ id: taskId, contextId, status: status(TaskState.TASK_STATE_SUBMITTED),
                                  artifacts: [], history: [context.userMessage], metadata: undefined }));
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING),
                                          metadata: undefined }));
    await new Promise((resolve) => setTimeout(resolve, WORK_MS));
    bus.publish(AgentEvent.artifactUpdate({
      taskId, contextId, append: false, lastChunk: true, metadata: undefined,
      artifact: { artifactId: `refund-${taskId}`, name: "refund", description: "", extensions: [], metadata: undefined,
                  parts: [{ content: { $case: "text", value: result }, metadata: undefined, filename: "",
                            mediaType: "text/plain" }] } }));
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED),
                                          metadata: undefined }));
    bus.finished();
  }

  async cancelTask() {
    throw new Error("slow-refunds-js does not cancel");
  }
}

function agentCard(base) {
  return {
    name: NAME, description: "Refunds, slowly (official JavaScript SDK, push and streaming).", version: "0.1.0",
    supportedInterfaces: [
      ...(JSONRPC ? [{ url: base + RPC_PATH, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }] : []),
      ...(REST ? [{ url: base + REST_PATH, protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" }] : [])],
    provider: undefined,
    capabilities: { streaming: true, pushNotifications: true, extensions: [] },
    securitySchemes: SCHEME ? { [SCHEME.name]: { scheme: { $case: SCHEME.$case, value: SCHEME.value } } } : {},
    securityRequirements: SCHEME ? [{ schemes: { [SCHEME.name]: { list: [] } } }] : [], signatures: [],
    defaultInputModes: MODES, defaultOutputModes: ["text/plain"],
    skills: [{ id: "process_refund", name: "Refund", description: "Issues a refund", tags: ["demo"], examples: [],
               inputModes: NO_MODES ? [] : MODES, outputModes: NO_MODES ? [] : MODES, securityRequirements: [] }],
  };
}

const port = Number(args.find((arg) => /^[0-9]+$/.test(arg)) ?? 0);
const app = express();
const listener = app.listen(port, "127.0.0.1", () => {
  const base = `http://127.0.0.1:${listener.address().port}`;
  const pushes = new InMemoryPushNotificationStore();
  const handler = new DefaultRequestHandler(agentCard(base), new InMemoryTaskStore(), new SlowRefunds(), undefined,
                                            pushes, new DefaultPushNotificationSender(pushes, { timeout: 5000 }));
  app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }));
  if (SCHEME) {
    app.use([RPC_PATH, REST_PATH], (req, res, next) => (SCHEME.carried(req) ? next()
      : res.status(401).set("WWW-Authenticate", SCHEME.challenge).json({ error: `${SCHEME.name} is required` })));
  }
  if (JSONRPC) app.use(RPC_PATH, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  if (REST) app.use(REST_PATH, restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  const endpoint = base + (JSONRPC ? RPC_PATH : REST_PATH);
  console.log(`listening on ${base} ${JSON.stringify({ name: NAME, endpoint })}`);
});
process.on("SIGTERM", () => listener.close(() => process.exit(0)));
