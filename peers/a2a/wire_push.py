"""How 0.3 and 1.0 spell a push-notification config (A2A TaskPushNotificationConfig).

1.0 flattens it into the request (`{taskId, id, url, token, authentication: {scheme,
credentials}}`) and names the config by `id`; 0.3 nests it (`{taskId,
pushNotificationConfig: {url, id, token, authentication: {schemes: [...], credentials}}}`)
and asks for one by the task's `id` and a `pushNotificationConfigId` (optional in 0.3: the
task's own id then; required in 1.0). A config sent with no id of its own is read with
none (""): the peer names it, never after one it keeps (peers/push_limits.py). 1.0 pages
a list of configs (`page`). Reading raises WireError naming the field; the URL's safety
is the server's business (peers/push.py), not the wire's.
"""
from __future__ import annotations

from peers.a2a.fields import MISSING, WireError, count, field, json_names, obj, proto_json, request_metadata
from peers.a2a.model import PushConfig
from transports.http11 import TOKEN

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

MAX_TEXT = 2048  # a URL, a token, credentials: none needs more
MAX_SCHEMES = 10  # a webhook's authentication schemes (0.3 lists them)


def _text(source: dict[str, Any], key: str, where: str, default: Any = MISSING, proto: bool = False) -> Any:
    """source[key] as bounded text; required unless a `default` is given (null then means it; on 1.0,
    `proto`, "" too, as proto3 JSON reads a string's default: an id "" is none given, for the peer to name)."""
    if default is not MISSING and (source.get(key) is None or (proto and source.get(key) == "")):
        return default
    value = field(source, key, str, where, default=default)
    if isinstance(value, str) and not 0 < len(value) <= MAX_TEXT:
        raise WireError(f"{where}{key} must be 1 to {MAX_TEXT} characters", where + key)
    return value


def config_from_wire(nested: bool, params: Any, task_id: str | None = None, path: str = "params") -> PushConfig:
    """The config a set request (or a send's configuration, with `task_id`, at `path`) carries."""
    request = (json_names if nested else proto_json)(obj(params, path))
    task_id = task_id if task_id is not None else _text(request, "taskId", path + ".")
    source = json_names(obj(request.get("pushNotificationConfig"), path + ".pushNotificationConfig")) if nested \
        else request
    where = path + (".pushNotificationConfig." if nested else ".")
    auth, authentication = source.get("authentication"), None
    if auth is not None:  # 0.3 lists the schemes a webhook takes, 1.0 names one; credentials are optional in both
        auth = obj(auth, where + "authentication")
        schemes = field(auth, "schemes", list, where + "authentication.") if nested \
            else [_text(auth, "scheme", where + "authentication.")]
        if not 0 < len(schemes) <= MAX_SCHEMES:
            raise WireError(f"{where}authentication.schemes must list 1 to {MAX_SCHEMES} schemes")
        if not all(isinstance(one, str) and len(one) <= 64 and TOKEN.fullmatch(one) for one in schemes):
            raise WireError(f"{where}authentication must name {'its schemes' if nested else 'one scheme'} as HTTP "
                            "does (RFC 9110 11.1: a token, like Bearer)")
        credentials = _text(auth, "credentials", where + "authentication.", default=None, proto=not nested)
        if credentials is not None and credentials != credentials.strip():  # a receiver would trim them: other ones
            raise WireError(f"{where}authentication.credentials must not begin or end with whitespace")
        authentication = (tuple(schemes), credentials)
    config_id = _text(source, "id", where, default=None, proto=not nested) or ""  # none of its own: the peer names it
    return PushConfig(task_id, config_id, _text(source, "url", where),
                      _text(source, "token", where, default=None, proto=not nested), authentication)


def query(nested: bool, params: Any) -> tuple[str, str | None]:
    """(task id, config id) of a get, list or delete request."""
    request = (json_names if nested else proto_json)(obj(params, "params"))
    if nested:  # 0.3's params carry metadata, read nowhere else: an object, if given
        request_metadata(request)
        return _text(request, "id", "params."), _text(request, "pushNotificationConfigId", "params.", default=None)
    return _text(request, "taskId", "params."), _text(request, "id", "params.")


def list_query(nested: bool, params: Any) -> tuple[str, int | None, str]:
    """(task id, page size or None for all, page token) of a list request; 0.3 has no pages."""
    if nested:
        return query(True, params)[0], None, ""
    request = proto_json(obj(params, "params"))
    size = count(request, "pageSize", 0, 2 ** 31 - 1) or None  # the most to return; 0 (proto3's unset): all (10 at most)
    token = request.get("pageToken")  # absent, null or "": the first page
    return _text(request, "taskId", "params."), size, "" if token in (None, "") else _text(request, "pageToken", "params.")


def page(configs: list[PushConfig], size: int | None, token: str) -> tuple[list[PushConfig], str]:
    """One page of a task's configs, from the one `token` names (a nextPageToken: the id of the
    first config not yet listed), and the token of the next ("" when none is left)."""
    ids = [config.id for config in configs]
    if token and token not in ids:
        raise WireError("pageToken must be a nextPageToken from an earlier list of this task's configs, naming "
                        "one still kept (the one it named was deleted since: list again from the start)")
    start = ids.index(token) if token else 0
    end = len(ids) if size is None else start + size
    return configs[start:end], ids[end] if end < len(ids) else ""


def config_to_wire(nested: bool, config: PushConfig) -> dict[str, Any]:
    body: dict[str, Any] = {"id": config.id, "url": config.url}
    if config.token:
        body["token"] = config.token
    if config.authentication:
        schemes, credentials = config.authentication
        body["authentication"] = {"schemes": list(schemes)} if nested else {"scheme": schemes[0]}
        if credentials is not None:
            body["authentication"]["credentials"] = credentials
    return {"taskId": config.task_id, "pushNotificationConfig": body} if nested else {"taskId": config.task_id, **body}
