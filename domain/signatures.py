"""HMAC-SHA256 signatures of lifecycle messages, shared by Warden and its consumers.

The header value is ``sha256=<hex HMAC-SHA256(secret, raw body)>`` (GitHub's scheme),
computed over the exact bytes sent: a consumer must verify before parsing the JSON.
"""

from __future__ import annotations

import hashlib
import hmac

#: Prefix naming the digest, so another algorithm can be added without ambiguity.
SIGNATURE_PREFIX = "sha256="


def sign_body(secret: str, body: bytes) -> str:
    """The `X-Warden-Signature` header value for `body` signed with `secret`.

    Args:
        secret: The deletion policy's hook secret.
        body: The raw request body, byte for byte.
    """
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return f"{SIGNATURE_PREFIX}{digest}"


def verify_signature(secret: str, body: bytes, header: str | None) -> bool:
    """Whether `header` is the signature of `body` under `secret` (constant time).

    Args:
        secret: The shared hook secret.
        body: The raw request body as received.
        header: The `X-Warden-Signature` value, None when the header is missing.
    """
    if not header:
        return False
    expected = sign_body(secret, body).encode()
    # Bytes, not str: compare_digest rejects non-ASCII str, and a header may hold anything.
    return hmac.compare_digest(expected, header.strip().encode())
