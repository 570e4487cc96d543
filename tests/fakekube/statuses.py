"""Failures as kube-apiserver reports them: an HTTP code plus a `Status` body with a machine-readable reason.

Clients branch on `reason` and `code` (the agent retries Conflict, waits on NotFound, reports Invalid), so the
fake raises these exact shapes; the message wording follows the real server's so logs read the same.
"""

from __future__ import annotations

from typing import Any

from tests.fakekube.resources import ResourceType


class ApiError(Exception):
    """A request failed; `body()` is the Status document the server answers with."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def body(self) -> dict[str, Any]:
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            status["details"] = self.details
        return status


def _details(resource_type: ResourceType, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name}
    if resource_type.group:
        details["group"] = resource_type.group
    details["kind"] = resource_type.plural
    return details


def not_found(resource_type: ResourceType, name: str) -> ApiError:
    return ApiError(
        404, "NotFound", f'{resource_type.group_resource} "{name}" not found', _details(resource_type, name)
    )


def namespace_not_found(namespace: str) -> ApiError:
    return ApiError(
        404, "NotFound", f'namespaces "{namespace}" not found', {"name": namespace, "kind": "namespaces"}
    )


def unknown_path() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def already_exists(resource_type: ResourceType, name: str) -> ApiError:
    return ApiError(
        409,
        "AlreadyExists",
        f'{resource_type.group_resource} "{name}" already exists',
        _details(resource_type, name),
    )


def stale_conflict(resource_type: ResourceType, name: str) -> ApiError:
    message = (
        f'Operation cannot be fulfilled on {resource_type.group_resource} "{name}": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )
    return ApiError(409, "Conflict", message, _details(resource_type, name))


def immortal_namespace(name: str) -> ApiError:
    """kube-apiserver's NamespaceLifecycle admission: default, kube-system, kube-public never go."""
    return ApiError(
        403,
        "Forbidden",
        f'namespaces "{name}" is forbidden: this namespace may not be deleted',
        {"name": name, "kind": "namespaces"},
    )


def precondition_failed(
    resource_type: ResourceType, name: str, field: str, expected: object, actual: object
) -> ApiError:
    """A delete whose precondition does not hold: the storage layer's error, which kube-apiserver turns into
    a 409 Conflict."""
    message = (
        f'Operation cannot be fulfilled on {resource_type.group_resource} "{name}": Precondition failed: '
        f"{field} in precondition: {expected}, {field} in object meta: {actual}"
    )
    return ApiError(409, "Conflict", message, _details(resource_type, name))


def _cause_reason(message: str) -> str:
    if message.startswith("Required value"):
        return "FieldValueRequired"
    if message.startswith("Unsupported value"):
        return "FieldValueNotSupported"
    if message.startswith("Forbidden"):
        return "FieldValueForbidden"
    return "FieldValueInvalid"


def invalid(resource_type: ResourceType, name: str, causes: list[tuple[str, str]]) -> ApiError:
    """422 listing every (field, message) problem, like a validation error from the real server."""
    group_kind = f"{resource_type.kind}.{resource_type.group}" if resource_type.group else resource_type.kind
    joined = ", ".join(f"{field}: {message}" for field, message in causes)
    listed = f"[{joined}]" if len(causes) > 1 else joined
    details: dict[str, Any] = {"name": name}
    if resource_type.group:
        details["group"] = resource_type.group
    details["kind"] = resource_type.kind
    details["causes"] = [
        {"reason": _cause_reason(message), "message": message, "field": field} for field, message in causes
    ]
    return ApiError(422, "Invalid", f'{group_kind} "{name}" is invalid: {listed}', details)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def method_not_allowed() -> ApiError:
    return ApiError(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {}
    )


def unsupported_media_type(content_type: str) -> ApiError:
    return ApiError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted "
        f"media types include: application/json-patch+json, application/merge-patch+json, "
        f'application/apply-patch+yaml, application/strategic-merge-patch+json (got "{content_type}")',
    )


def expired(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def internal(message: str) -> ApiError:
    return ApiError(500, "InternalError", message)


_REASONS_BY_CODE = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    409: "Conflict",
    410: "Gone",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def injected(code: int, message: str) -> ApiError:
    """A failure a test asked for with `fail_next`."""
    return ApiError(code, _REASONS_BY_CODE.get(code, "Unknown"), message, {})
