"""What `check` grades an agent by: one table, one row per requirement.

Spec: A2A 1.0 (the section of each row). A row's id is the official conformance kit's
where the kit has that requirement (CARD-CACHE-001, CORE-GET-002 ...), else ours in the
same style, prefixed WB- so the two never collide. Its level is the spec's word (MUST,
SHOULD, MAY): the run's exit status is 1 when any MUST fails, whatever else does. Its
family names the module whose checks give it a verdict (card_checks, protocol_checks,
auth_checks); a new check is one row here and one function there. Not here: how a verdict
is reached (the families), how it is shown (report.py).
"""
from transports.records import Record


class Requirement(Record):
    id: str
    section: str  # A2A 1.0's, unless the row names another document (RFC 9110 ...)
    level: str  # "MUST", "SHOULD" or "MAY"
    family: str  # "card", "protocol" or "auth": the module that judges it
    title: str
    fix: str  # one line: what the agent's author changes


def _row(id: str, section: str, level: str, family: str, title: str, fix: str) -> Requirement:  # noqa: A002
    return Requirement(id, section, level, family, title, fix)


REQUIREMENTS = (
    # -- the card (A2A 1.0 section 8) --
    _row("CARD-DISC-001", "8.2", "MUST", "card", "The Agent Card is served at /.well-known/agent-card.json as JSON",
         "serve the card with 200 and a JSON object at /.well-known/agent-card.json"),
    _row("WB-CARD-VERSION-001", "8.3", "SHOULD", "card", "The card offers an A2A 1.0 interface",
         "list supportedInterfaces with a protocolVersion 1.0 interface (a 0.3 one may stay beside it)"),
    _row("CARD-STRUCT-001", "4.4.1", "MUST", "card", "The card has every field its version requires, of its type",
         "add the fields the finding names, with the types the spec gives them"),
    _row("CARD-PROTO-001", "8.3", "MUST", "card", "supportedInterfaces declares at least one binding a client can use",
         "list JSONRPC, HTTP+JSON or GRPC in supportedInterfaces, preferred first"),
    _row("CARD-PROTO-002", "8.3.1", "MUST", "card", "Each interface names an absolute http(s) url, its binding and version",
         "give every supportedInterfaces entry url, protocolBinding and protocolVersion (0.3: url and transport)"),
    _row("WB-CARD-MODES-001", "4.4.1", "SHOULD", "card", "Input and output modes are media types (type/subtype)",
         "write each mode as a media type such as text/plain or application/json"),
    _row("WB-CARD-SKILLS-001", "4.4.5", "MUST", "card", "Skills have ids, and no two skills share one",
         "give each skill a unique, non-empty id"),
    _row("WB-CARD-SCHEMES-001", "4.5", "MUST", "card", "Every scheme a requirement names is declared in securitySchemes",
         "declare each scheme named in securityRequirements (the card's and each skill's) in securitySchemes"),
    _row("WB-CARD-DIALECT-001", "4.5", "SHOULD", "card", "Security schemes and requirements are in A2A 1.0's own form",
         "write schemes as 1.0's oneof ({\"httpAuthSecurityScheme\": {...}}) and requirements as {\"schemes\": ...}"),
    _row("CARD-SIGN-003", "8.4.2", "MUST", "card", "Each signature's protected header names alg and kid",
         "sign with a protected header holding alg, kid and typ JOSE"),
    _row("CARD-SIGN-001", "8.4.1", "MUST", "card", "A signature verifies over the card's JCS form without signatures",
         "sign the RFC 8785 canonical card, its signatures member and empty values left out"),
    _row("CARD-CACHE-001", "8.6.1", "SHOULD", "card", "The card is served with Cache-Control",
         "send Cache-Control: max-age=N with the card"),
    _row("CARD-CACHE-002", "8.6.1", "SHOULD", "card", "The card is served with an ETag",
         "send an ETag with the card"),
    _row("CARD-CACHE-003", "8.6.1", "MAY", "card", "The card is served with Last-Modified",
         "send Last-Modified with the card"),
    _row("WB-CARD-CACHE-004", "8.6.1; RFC 9110 13.1.2, 15.4.5", "SHOULD", "card",
         "A GET with If-None-Match of the card's ETag is answered 304 Not Modified with it; of another tag, the card",
         "answer 304 with no body and the ETag when If-None-Match names the current ETag, and the card when not"),
    _row("WB-CARD-HEAD-001", "RFC 9110 9.3.2", "SHOULD", "card", "HEAD on the card answers as GET would, without a body",
         "answer HEAD on the card with GET's status and headers and no body"),
    # -- the protocol, on each binding the card declares (sections 3.3, 3.6, 9, 11) --
    _row("WB-BIND-MEASURED-001", "5.1", "MAY", "protocol", "Every binding the card declares is one this checker speaks",
         "nothing to fix: gRPC is not measured by this checker"),
    _row("VER-SERVER-001", "3.6.2", "MUST", "protocol", "A request with A2A-Version: 1.0 is processed as 1.0",
         "read the A2A-Version header and answer 1.0 requests with 1.0's semantics"),
    _row("VER-SERVER-002", "3.6.2", "MUST", "protocol", "An unsupported A2A-Version is refused with VersionNotSupportedError",
         "answer a version you do not serve with -32009 (HTTP+JSON: VERSION_NOT_SUPPORTED)"),
    _row("VER-CLIENT-002", "3.6", "MUST", "protocol", "A patch number in A2A-Version does not change the version",
         "read A2A-Version 1.0.7 as 1.0: compare Major.Minor only"),
    _row("VER-SERVER-003", "3.6.2", "MUST", "protocol", "No A2A-Version means 0.3",
         "treat a request without A2A-Version as 0.3 (answer 1.0's methods with -32009 or -32601)"),
    _row("WB-VER-PARAM-001", "3.6.1", "SHOULD", "protocol", "The A2A-Version request parameter is honoured",
         "read ?A2A-Version= when the header is absent, as the header"),
    _row("CORE-GET-002", "3.1.3", "MUST", "protocol", "GetTask on an unknown id answers TaskNotFoundError",
         "answer GetTask for an id you do not hold with -32001 (HTTP+JSON: 404 TASK_NOT_FOUND)"),
    _row("CORE-CANCEL-003", "3.1.5", "MUST", "protocol", "CancelTask on an unknown id answers TaskNotFoundError",
         "answer CancelTask for an id you do not hold with -32001 (HTTP+JSON: 404 TASK_NOT_FOUND)"),
    _row("PUSH-GET-002", "3.1.8", "MUST", "protocol", "Getting a push config of an unknown task fails",
         "answer with TaskNotFoundError (or PushNotificationNotSupportedError when the card says no push)"),
    _row("WB-JSONRPC-ERR-001", "9.5; JSON-RPC 2.0 5.1", "MUST", "protocol", "An unknown method answers -32601",
         "answer a method you do not define with -32601 Method not found"),
    _row("WB-JSONRPC-ERR-002", "9.5; JSON-RPC 2.0 5.1", "MUST", "protocol", "Invalid params answer -32602",
         "validate params before acting and answer -32602 Invalid params"),
    _row("WB-JSONRPC-ERR-003", "9.5; JSON-RPC 2.0 5.1", "MUST", "protocol", "Malformed JSON answers -32700",
         "answer a body that is not JSON with -32700 Parse error"),
    _row("JSONRPC-ERR-001", "9.5", "MUST", "protocol", "Errors are JSON-RPC 2.0 error objects echoing the request id",
         "answer {\"jsonrpc\": \"2.0\", \"id\": <the request's>, \"error\": {\"code\": int, \"message\": str}}"),
    _row("JSONRPC-ERR-003", "9.5", "MUST", "protocol", "A2A errors carry an ErrorInfo in data",
         "put [{\"@type\": \"type.googleapis.com/google.rpc.ErrorInfo\", \"reason\": ...}] in error.data"),
    _row("HTTP_JSON-ERR-001", "11.6", "MUST", "protocol", "HTTP+JSON errors are google.rpc.Status objects",
         "answer errors as {\"error\": {\"code\", \"status\", \"message\", \"details\"}}"),
    _row("HTTP_JSON-ERR-002", "11.6", "MUST", "protocol", "HTTP+JSON A2A errors carry an ErrorInfo in details",
         "put an ErrorInfo naming the A2A reason (TASK_NOT_FOUND ...) in error.details"),
    _row("HTTP_JSON-STATUS-001", "5.4", "MUST", "protocol", "HTTP+JSON A2A errors map to their HTTP status",
         "answer TaskNotFoundError with 404, VersionNotSupportedError with 400"),
    _row("WB-HTTP_JSON-ERR-003", "3.3.2; 11.6", "SHOULD", "protocol", "A malformed HTTP+JSON body answers 400 "
         "(or 404 for the unknown task its path names)", "answer a body that is not JSON with 400 INVALID_ARGUMENT"),
    _row("WB-HTTP_JSON-ERR-004", "3.3.2; 11.6", "MUST", "protocol", "Invalid HTTP+JSON params answer 400 "
         "INVALID_ARGUMENT", "validate a request's parameters before acting and answer 400 with status "
         "INVALID_ARGUMENT (a google.rpc.BadRequest in details may say which)"),
    _row("WB-HTTP_JSON-URL-001", "11.3", "SHOULD", "protocol", "A path no operation has answers 404",
         "answer a path outside section 11.3's routes with 404"),
    _row("JSONRPC-FMT-002", "9.1", "MUST", "protocol", "JSON-RPC answers are Content-Type application/json",
         "send Content-Type: application/json with every JSON-RPC answer"),
    _row("HTTP_JSON-SVC-001", "11.1", "SHOULD", "protocol", "HTTP+JSON operations are answered as application/a2a+json "
         "(or application/json)", "send Content-Type: application/a2a+json with every operation's answer"),
    _row("WB-BIND-CTYPE-001", "9.1; 11.1", "SHOULD", "protocol", "A request of the wrong Content-Type is refused, not processed",
         "refuse a request body that is not JSON's media type with 415 (or -32005)"),
    # -- authentication (section 7), and the extended card (3.1.11) --
    _row("AUTH-SERVER-002", "7.4", "MUST", "auth", "A request with no credential is refused",
         "authenticate every request the card's securityRequirements cover: 401 without one"),
    _row("WB-AUTH-WRONG-001", "7.4", "MUST", "auth", "A request with a wrong credential is refused",
         "check the credential's value, not only that one was sent"),
    _row("WB-AUTH-RIGHT-001", "7.4", "MUST", "auth", "A request with the right credential is accepted",
         "accept the credential the card's scheme describes, sent where it says (or, if yours is wrong, "
         "give --credentials the right one)"),
    _row("WB-AUTH-CHALLENGE-001", "7.4; RFC 9110 11.6.1", "SHOULD", "auth", "A 401 carries a WWW-Authenticate challenge",
         "send WWW-Authenticate naming the scheme with every 401"),
    _row("CARD-EXT-001", "3.1.11", "MUST", "auth", "The extended card is served only to an authenticated caller",
         "refuse GetExtendedAgentCard without a credential (401)"),
    _row("WB-CARD-EXT-003", "3.1.11", "MUST", "auth", "An authenticated caller gets the extended card, a card",
         "answer GetExtendedAgentCard with an AgentCard to a caller the card's scheme accepts"),
    _row("CORE-CAP-003", "3.3.4", "MUST", "auth", "Without extendedAgentCard, GetExtendedAgentCard is refused",
         "answer GetExtendedAgentCard with -32004 UnsupportedOperationError when the card does not declare one"),
)

# -- with --deep: what needs a task (sections 3.1, 3.2.4, 3.4, 3.5, 5.1); each sends messages --
DEEP = (
    _row("CORE-SEND-001", "3.1.1", "MUST", "task", "SendMessage answers a Task or a Message, in the card's version's shape",
         "answer {\"task\": Task} or {\"message\": Message} (0.3: the object, with its kind), a task with id, "
         "contextId and status.state"),
    _row("CORE-MULTI-003", "3.4.2", "MUST", "task", "Each new task has a taskId of its own",
         "mint a fresh task id for every task a message starts"),
    _row("CORE-GET-001", "3.1.3", "MUST", "task", "GetTask answers the task, in its current state",
         "answer GetTask with the Task the id names: its id, contextId and current status"),
    _row("CORE-HIST-001", "3.2.4", "SHOULD", "task", "GetTask with historyLength 0 leaves the history out",
         "send no history messages when historyLength is 0"),
    _row("CORE-HIST-002", "3.2.4", "MUST", "task", "GetTask sends no more history than historyLength asks",
         "send at most historyLength of the most recent history messages"),
    _row("CORE-LIST-002", "3.1.4", "MUST", "task", "ListTasks pages by pageSize and nextPageToken, the cursor stable "
         "as tasks are added", "honour pageSize and return a nextPageToken that resumes after the last task sent"),
    _row("CORE-LIST-004", "3.1.4", "MUST", "task", "ListTasks' last page has an empty nextPageToken",
         "send nextPageToken \"\" on the final page"),
    _row("WB-LIST-FILTER-001", "3.1.4", "MUST", "task", "ListTasks filters by contextId and by status",
         "list only the tasks of the contextId and status asked for"),
    _row("CORE-CANCEL-002", "3.1.5", "MUST", "task", "CancelTask on a terminal task answers TaskNotCancelableError",
         "answer CancelTask on a completed, failed, canceled or rejected task with -32002 (HTTP+JSON 409)"),
    _row("CORE-SEND-002", "3.1.1", "MUST", "task", "A message to a terminal task is refused",
         "refuse a message whose taskId names a terminal task (-32004 UnsupportedOperation, or an A2A error)"),
    _row("WB-SEND-DUP-001", "3.3.1", "MAY", "task", "A messageId sent twice is answered with the task it made "
         "(Send Message MAY be idempotent)", "to make Send Message idempotent, detect a repeated messageId and "
         "answer it with the task it made"),
    _row("WB-MULTI-TURN-001", "3.4.3", "MUST", "task", "A message with a paused task's taskId and contextId continues it",
         "continue the task the taskId names, in its contextId, when it waits in input-required"),
    _row("BIND-EQUIV-002", "5.1", "MUST", "task", "The same GetTask over JSON-RPC and HTTP+JSON answers the same task",
         "serve one task model behind both bindings: the same fields, with the same values"),
    _row("CORE-STREAM-001", "3.1.2", "MUST", "stream", "SendStreamingMessage answers Content-Type text/event-stream",
         "answer SendStreamingMessage with 200 and a text/event-stream of events"),
    _row("CORE-STREAM-003", "3.1.2", "MUST", "stream", "A stream begins with a Task or Message, carries its task's "
         "updates only, and closes after the Message or a terminal state (or ends at an interrupted one)",
         "send the Task (or the one Message) first, then that task's updates only, and close the stream right after "
         "the Message or the terminal state's event"),
    _row("STREAM-SUB-001", "3.1.6", "MUST", "stream", "SubscribeToTask on a live task streams the Task first",
         "answer SubscribeToTask with a stream whose first event is the task as it is now"),
    _row("STREAM-SUB-003", "3.1.6", "MUST", "stream", "SubscribeToTask on a terminal task is refused",
         "answer SubscribeToTask on a terminal task with -32004 UnsupportedOperation (or TaskNotFound)"),
    _row("PUSH-CREATE-001", "3.1.7", "MUST", "push", "CreateTaskPushNotificationConfig keeps the webhook given",
         "store the config and answer it back, with its id and url"),
    _row("PUSH-GET-001", "3.1.8", "MUST", "push", "GetTaskPushNotificationConfig returns the config set",
         "answer the config with the id it was set under"),
    _row("PUSH-LIST-001", "3.1.9", "MUST", "push", "ListTaskPushNotificationConfigs lists the config set",
         "list every config the task holds"),
    _row("PUSH-DEL-001", "3.1.10", "MUST", "push", "DeleteTaskPushNotificationConfig removes the config",
         "remove the config: a later get answers an error"),
    _row("CORE-CAP-001", "3.3.4", "MUST", "push", "Without pushNotifications, push configs are refused",
         "answer push-config requests with -32003 PushNotificationNotSupportedError when the card declares no push"),
    _row("WB-PUSH-SSRF-001", "13.2", "MAY", "push", "Whether a webhook at a private address is accepted (reported, "
         "never failed)", "refuse webhooks at loopback and private addresses, unless this is a test instance"),
    _row("WB-PUSH-REDACT-001", "13.2", "MAY", "push", "Whether a push config read back echoes its notification token "
         "(reported, never failed)", "leave the token out of a config read back, or mask it: whoever reads it can "
         "pose as the agent to the webhook"),
    # -- with --deep and --other-caller: caller B asks for caller A's task (section 13.1) --
    _row("WB-CALLER-GET-001", "13.1", "MUST", "callers", "Another caller cannot get a caller's task",
         "scope GetTask to the caller who made the task: anyone else gets TaskNotFoundError"),
    _row("CORE-LIST-001", "3.1.4", "MUST", "callers", "ListTasks lists only the caller's own tasks",
         "filter ListTasks by the authenticated caller"),
    _row("WB-CALLER-CANCEL-001", "13.1", "MUST", "callers", "Another caller cannot cancel a caller's task",
         "scope CancelTask to the caller who made the task"),
    _row("WB-CALLER-SUBSCRIBE-001", "13.1", "MUST", "callers", "Another caller cannot subscribe to a caller's task",
         "scope SubscribeToTask to the caller who made the task"),
    _row("WB-CALLER-PUSH-001", "13.1", "MUST", "callers", "Another caller cannot set a push config on a caller's task",
         "scope push-config requests to the caller who made the task"),
    _row("AUTH-SCOPE-003", "3.3.2", "MUST", "callers", "Another caller is not told that a caller's task exists",
         "answer another caller's request for a task exactly as for an id no task has (TaskNotFoundError)"),
)
REQUIREMENTS += DEEP
BY_ID = {row.id: row for row in REQUIREMENTS}
LEVELS = ("MUST", "SHOULD", "MAY")
