"""Keypair activity: create once, even when the first answer was lost.

Nova no longer makes private keys (microversion 2.92); Warden makes an ed25519 key
when a template gives no public key. The key comes from a seed the workflow drew, so
every attempt of one create makes the same key, and a 409 for a keypair holding that
very key is an earlier attempt's success, adopted.
"""

from __future__ import annotations

import hashlib

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from temporalio import activity

from activities.cloud.collections import CollectionClient, collection
from activities.errors import application_error
from domain.errors import BackendConflict, WardenError
from domain.stack.types.nova.keypair import Keypair, KeypairRequest


def key_from_seed(seed: str) -> tuple[str, str]:
    """(OpenSSH public key, PEM private key) of the ed25519 key derived from `seed`."""
    private = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(seed.encode()).digest())
    public = private.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.OpenSSH,
        serialization.NoEncryption(),
    )
    return public.decode(), pem.decode()


class KeypairActivities:
    """Nova keypairs through the collection client."""

    def __init__(self, objects: CollectionClient) -> None:
        self._objects = objects

    @activity.defn(name="create_keypair")
    async def create_keypair(self, request: KeypairRequest) -> Keypair:
        """Create the keypair, or adopt the one an earlier attempt made with this key."""
        private = None
        public = request.public_key
        if public is None:
            public, private = key_from_seed(request.seed)
        body = {"name": request.name, "public_key": public}
        if request.type:
            body["type"] = request.type
        if request.user:
            body["user_id"] = request.user
        coll = collection("keypair")
        try:
            try:
                made = await self._objects.create(coll, body)
            except BackendConflict:
                made = await self._objects.show(coll, request.name)
                if made.get("public_key", "").split()[:2] != public.split()[:2]:
                    raise
        except WardenError as err:
            raise application_error(err) from err
        return Keypair(name=request.name, public_key=public, private_key=private, body=made)
