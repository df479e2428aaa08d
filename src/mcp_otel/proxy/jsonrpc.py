"""A JSON-RPC line (or HTTP body, or event's data) decoded only as far as an outcome needs: a
request's params whole (they name its target and carry its context), but of an answer's result
only the few fields a classifier reads (:class:`Facts`), so a 10 MB tool result is scanned, never
built into objects. Never raises: what is not JSON-RPC decodes to no message. The wire front end
(:mod:`mcp_otel.proxy.wire`) reads every message through it."""

from __future__ import annotations

from typing import Any

import msgspec

from mcp_otel.model.classify import RpcError


class Facts(msgspec.Struct, gc=False):
    """What an answer's result tells its outcome, and nothing else of it (its content is skipped)."""

    isError: Any = None
    resultType: Any = None
    task: Any = None
    action: Any = None  # an elicitation's answer
    serverInfo: Any = None
    protocolVersion: Any = None
    meta: Any = msgspec.field(name="_meta", default=None)  # server/discover names the server here

    def as_result(self) -> dict[str, Any]:
        """The result as the classifiers read a wire dict: the fields it has."""
        fields = {
            "isError": self.isError,
            "resultType": self.resultType,
            "task": self.task,
            "action": self.action,
            "serverInfo": self.serverInfo,
            "protocolVersion": self.protocolVersion,
            "_meta": self.meta,
        }
        return {key: value for key, value in fields.items() if value is not None}


class Message(msgspec.Struct, gc=False):
    """A JSON-RPC message, as far as the wire front end reads it (UNSET: the member is absent)."""

    id: Any = None
    method: Any = None
    params: Any = None
    # A result that is not an object (not MCP's, but an answer all the same) is kept as it is.
    result: Facts | list[Any] | str | int | float | bool | msgspec.UnsetType | None = msgspec.UNSET
    error: Any = msgspec.UNSET


# A line holds one message or a batch of them.
_decode = msgspec.json.Decoder(Message | list[Message]).decode
_decode_one = msgspec.json.Decoder(Message).decode
_decode_members = msgspec.json.Decoder(list[msgspec.Raw]).decode


def decode_line(line: bytes) -> list[Message]:
    """The messages of a line; of a batch with members that are not messages, the others; none
    for a line that is not JSON-RPC (not JSON, not UTF-8, not objects)."""
    try:
        decoded = _decode(line)
    except msgspec.ValidationError:  # a batch with odd members, or no message at all
        try:
            members = _decode_members(line)
        except msgspec.MsgspecError:
            return []
        found = []
        for member in members:
            try:
                found.append(_decode_one(member))
            except msgspec.MsgspecError:
                continue
        return found
    except msgspec.MsgspecError:
        return []
    return decoded if isinstance(decoded, list) else [decoded]


# A request's key in a session: its JSON-RPC id, typed (see request_key).
Key = tuple[str, Any]


def request_key(request_id: Any) -> Key | None:
    """A JSON-RPC id as a key (``1`` and ``"1"`` are different ids); ``None``: no id."""
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return None
    return ("n" if isinstance(request_id, int) else "s", request_id)


def rpc_error(error: Any) -> RpcError | None:
    if not isinstance(error, dict):
        return None
    code = error.get("code")
    if isinstance(code, bool) or not isinstance(code, int):
        return RpcError(0, "")  # an error without a usable code is still an error
    message = error.get("message")
    return RpcError(code, message if isinstance(message, str) else "")
