"""The signed release manifest: what code a table runs, proved at every start (docs/compliance.md,
"Software identity and the tilt").

A manifest names the SHA-256 of every packaged file of ``shoe_ctl``, ``drivers`` and ``hil``, the
installed version of every runtime dependency and the configuration schema version; the person who
publishes a release signs its canonical bytes with an Ed25519 key (``shoe-ctl release sign``) and the
table pins the key's public half in its configuration (``[release] public_key``). At start the
service checks the installed code against the manifest (:func:`check`) before it opens the shoe; a
mismatch, a missing signature or an unknown key is a tilt. :func:`seeded_answer` is the on-demand
verification a floor or a lab asks for with a random seed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import importlib.metadata
import json
import os
import re
import stat
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
    load_pem_private_key,
)

import shoe_ctl
from shoe_ctl.config import CONFIG_SCHEMA, read_toml
from shoe_ctl.rules.profiles import ProfileError

__all__ = [
    "MANIFEST_VERSION", "PACKAGES", "ReleaseConfig", "ReleaseError", "Verdict", "build_manifest", "check",
    "SoftwareIdentity", "code_root", "default_manifest_path", "key_id", "load_private_key", "load_release_config", "manifest_bytes",
    "new_private_key", "parse_public_key", "public_key_text", "read_manifest", "seeded_answer", "sign_manifest",
    "software_identity", "verify_signature",
]

MANIFEST_VERSION = 1
"""The manifest's own format version (its ``v``)."""
PACKAGES = ("shoe_ctl", "drivers", "hil")
"""The packages whose files a manifest covers (as installed: ``*.py``, ``py.typed``, the display's
static files)."""
MAX_MANIFEST_BYTES = 4 << 20
"""A manifest or signature file larger than this is refused unread."""
MAX_SEED_HEX = 128
"""The longest seed taken, in hex digits (64 bytes); at least 32 hex digits (16 bytes)."""
MIN_SEED_HEX = 32
VERIFY_ENV = "SHOE_CTL_RELEASE_VERIFY"
"""The environment variable giving ``[release] verify`` where the file does not set it."""
TILT_CODE = "software-mismatch"
"""The latched alert code of a tilt (docs/compliance.md)."""


class ReleaseError(Exception):
    """A manifest, signature, key or seed that cannot be used; the message names the file or value
    and what is wrong."""


@dataclass(frozen=True, slots=True)
class ReleaseConfig:
    """``[release]`` of the table configuration: ``verify`` (``"on"``: check at start, a failure
    is a tilt; ``"off"``: a development checkout, said on the display and by ``doctor``),
    ``public_key`` (the release key's public half, base64 of its 32 raw bytes; ``None``: none
    pinned) and ``manifest`` (the installed manifest; its signature is ``<manifest>.sig``)."""

    verify: str = "on"
    public_key: str | None = None
    manifest: str = field(default_factory=lambda: str(default_manifest_path()))
    config_file: str | None = None
    """The table configuration file this came from (its bytes enter the seeded answer)."""


def default_manifest_path() -> Path:
    """Where ``scripts/setup.sh pi`` installs the manifest: ``<venv>/share/shoe-ctl/release.json``."""
    return Path(sys.prefix) / "share" / "shoe-ctl" / "release.json"


def load_release_config(path: str | os.PathLike[str]) -> ReleaseConfig:
    """``[release]`` of a table configuration file; absent: verification on, no key pinned (a
    table that was never set up tilts rather than runs unchecked code). ``$SHOE_CTL_RELEASE_VERIFY``
    (``on``/``off``) is the default of a file that does not set ``verify`` (the test suite's
    scratch configurations); "off" is said on the display and by doctor either way.

    :raises ProfileError: naming the file, the key and the allowed values.
    """
    src = str(path)
    data = read_toml(Path(path))
    sect = data.get("release", {})
    if not isinstance(sect, Mapping):
        raise ProfileError(src, "release", "is not a table", "a [release] table")
    for key in sect:
        if key not in ("verify", "public_key", "manifest"):
            raise ProfileError(src, f"release.{key}", "unknown key", "keys verify, public_key, manifest")
    verify = sect.get("verify", os.environ.get(VERIFY_ENV) or "on")
    if verify not in ("on", "off"):
        raise ProfileError(src, "release.verify", f"{verify!r} is not a mode", "on, off")
    key = sect.get("public_key")
    if key is not None:
        if not isinstance(key, str):
            raise ProfileError(src, "release.public_key", "is not a text", "base64 of a 32-byte Ed25519 public key")
        try:
            parse_public_key(key)
        except ReleaseError as exc:
            raise ProfileError(src, "release.public_key", str(exc), "base64 of a 32-byte Ed25519 public key") from None
    manifest = sect.get("manifest", str(default_manifest_path()))
    if not isinstance(manifest, str) or not manifest.strip():
        raise ProfileError(src, "release.manifest", "is not a file path", "a file path")
    return ReleaseConfig(verify=verify, public_key=key or None, manifest=manifest, config_file=src)


# --------------------------------------------------------------------------- keys


def new_private_key() -> Ed25519PrivateKey:
    """A fresh Ed25519 signing key."""
    return Ed25519PrivateKey.generate()


def private_key_pem(key: Ed25519PrivateKey) -> bytes:
    """``key`` as an unencrypted PKCS#8 PEM (kept offline by the publisher, mode 0600)."""
    return key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())


def load_private_key(path: str | os.PathLike[str]) -> Ed25519PrivateKey:
    """The Ed25519 signing key in the PEM file ``path``.

    :raises ReleaseError: unreadable, not PEM, or not an Ed25519 key.
    """
    try:
        data = Path(path).read_bytes()
        key = load_pem_private_key(data, password=None)
    except OSError as exc:
        raise ReleaseError(f"{path}: cannot read the key ({exc.strerror or exc})") from None
    except (ValueError, TypeError) as exc:
        raise ReleaseError(f"{path}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ReleaseError(f"{path}: not an Ed25519 key")
    return key


def public_key_text(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    """The public half as base64 of its 32 raw bytes (the form ``[release] public_key`` pins)."""
    pub = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return base64.b64encode(pub.public_bytes(Encoding.Raw, PublicFormat.Raw)).decode("ascii")


def parse_public_key(text: str) -> Ed25519PublicKey:
    """The Ed25519 public key written as base64 of its 32 raw bytes.

    :raises ReleaseError: not base64, or not 32 bytes.
    """
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise ReleaseError("not base64") from None
    if len(raw) != 32:
        raise ReleaseError(f"{len(raw)} bytes, an Ed25519 public key has 32")
    return Ed25519PublicKey.from_public_bytes(raw)


def key_id(key: Ed25519PublicKey | str) -> str:
    """A key's short name: the first 16 hex digits of SHA-256 over its 32 raw bytes."""
    pub = parse_public_key(key) if isinstance(key, str) else key
    return hashlib.sha256(pub.public_bytes(Encoding.Raw, PublicFormat.Raw)).hexdigest()[:16]


# --------------------------------------------------------------------------- the manifest


def code_root() -> Path:
    """The folder holding the running ``shoe_ctl`` package (site-packages, or a checkout)."""
    return Path(shoe_ctl.__file__).resolve().parent.parent


def packaged_files(root: Path) -> dict[str, Path]:
    """Relative path (``shoe_ctl/table.py``) -> file, for every packaged file of :data:`PACKAGES`
    under ``root``: the ``*.py`` files, ``py.typed`` and the display's static files (what pip
    installs), never a ``__pycache__``."""
    out: dict[str, Path] = {}
    for pkg in PACKAGES:
        for f in (root / pkg).rglob("*"):
            if "__pycache__" in f.parts or not f.is_file():
                continue
            rel = f.relative_to(root).as_posix()
            if f.suffix == ".py" or f.name == "py.typed" or "/static/" in rel:
                out[rel] = f
    return dict(sorted(out.items()))


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def dependency_versions() -> dict[str, str]:
    """Name -> installed version of every runtime dependency of the ``shoe-ctl`` distribution
    (extras left out); ``"absent"`` for one not installed."""
    try:
        reqs = importlib.metadata.requires("shoe-ctl") or []
    except importlib.metadata.PackageNotFoundError:
        return {}
    out: dict[str, str] = {}
    for req in reqs:
        if "extra ==" in req:
            continue
        m = re.match(r"[A-Za-z0-9._-]+", req)
        if m is None:
            continue
        name = m.group(0).lower()
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "absent"
    return dict(sorted(out.items()))


class Manifest(TypedDict):
    """The release manifest (``release.json``), as :func:`build_manifest` makes it and
    :func:`read_manifest` reads it back: ``v``, ``files`` and ``dependencies`` are checked there;
    the others are read with ``get``."""

    v: int
    files: dict[str, str]
    """Relative path -> SHA-256 hex of the file."""
    dependencies: dict[str, str]
    """Distribution name -> version."""
    name: NotRequired[str]
    version: NotRequired[str]
    config_schema: NotRequired[int]


def build_manifest(root: Path | None = None) -> Manifest:
    """The manifest of the code under ``root`` (default :func:`code_root`): ``v``, ``name``,
    ``version``, ``config_schema``, ``dependencies`` (name -> version) and ``files`` (relative
    path -> SHA-256 hex)."""
    root = root or code_root()
    return {"v": MANIFEST_VERSION, "name": "shoe-ctl", "version": shoe_ctl.__version__,
            "config_schema": CONFIG_SCHEMA, "dependencies": dependency_versions(),
            "files": {rel: _sha256_file(f) for rel, f in packaged_files(root).items()}}


def manifest_bytes(manifest: Mapping[str, Any]) -> bytes:
    """The canonical bytes that are signed: JSON with sorted keys, no spaces, ASCII, one newline."""
    return json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii") + b"\n"


def sign_manifest(data: bytes, key: Ed25519PrivateKey) -> bytes:
    """The signature file's bytes for the manifest ``data``: JSON ``{"v", "alg": "ed25519",
    "key": key id, "signature": base64 of 64 bytes}``."""
    sig = base64.b64encode(key.sign(data)).decode("ascii")
    body = {"v": 1, "alg": "ed25519", "key": key_id(key.public_key()), "signature": sig}
    return json.dumps(body, sort_keys=True).encode("ascii") + b"\n"


def _read_small(path: Path, what: str) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise ReleaseError(f"no {what} at {path}") from None
    except OSError as exc:
        raise ReleaseError(f"{what} {path}: cannot read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ReleaseError(f"{what} {path}: not a regular file")
        data = fh.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise ReleaseError(f"{what} {path}: larger than {MAX_MANIFEST_BYTES} bytes")
    return data


def read_manifest(path: str | os.PathLike[str]) -> tuple[bytes, Manifest]:
    """The manifest file's bytes and its parsed form.

    :raises ReleaseError: absent, unreadable, too large, or not a manifest.
    """
    data = _read_small(Path(path), "release manifest")
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ReleaseError(f"release manifest {path}: not JSON ({exc})") from None
    if not isinstance(parsed, dict) or parsed.get("v") != MANIFEST_VERSION or not isinstance(parsed.get("files"), dict) \
            or not isinstance(parsed.get("dependencies"), dict):
        raise ReleaseError(f"release manifest {path}: not a version-{MANIFEST_VERSION} manifest "
                           "(v, files, dependencies)")
    return data, cast(Manifest, parsed)  # its v, files and dependencies checked just above


def verify_signature(data: bytes, sig_path: Path, public_key: str | None) -> str:
    """Check the signature file ``sig_path`` over ``data`` against the pinned key; returns the key id.

    :raises ReleaseError: no key pinned, no or unreadable signature, a signature by another key
        (an unknown key), or one that does not verify (a tampered manifest or a forged signature).
    """
    if not public_key:
        raise ReleaseError("no release key is pinned ([release] public_key)")
    pinned = parse_public_key(public_key)
    pinned_id = key_id(pinned)
    raw = _read_small(sig_path, "release signature")
    try:
        body = json.loads(raw.decode("utf-8"))
        sig = base64.b64decode(body["signature"], validate=True)
        claimed = str(body["key"])
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, binascii.Error, RecursionError):
        raise ReleaseError(f"release signature {sig_path}: not a signature file (v, alg, key, signature)") from None
    if claimed != pinned_id:
        raise ReleaseError(f"release signature {sig_path}: signed by the unknown key {claimed[:16]!r}, "
                           f"not the pinned key {pinned_id}")
    try:
        pinned.verify(sig, data)
    except InvalidSignature:
        raise ReleaseError(f"release signature {sig_path}: does not verify with the pinned key {pinned_id} "
                           "(the manifest was changed after signing, or the signature is forged)") from None
    return pinned_id


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of :func:`check`: ``ok``; ``problem`` (one line, for the tilt alert and the
    journal); ``first_file`` (the first differing file, relative path, or ``None``);
    ``digest`` (SHA-256 hex of the manifest's bytes, ``""`` without one); ``version`` (of the
    manifest, else the running code's); ``key`` (the verified key id, ``""`` when not verified);
    ``off``: verification is switched off (``[release] verify = "off"``)."""

    ok: bool
    problem: str = ""
    first_file: str | None = None
    digest: str = ""
    version: str = shoe_ctl.__version__
    key: str = ""
    off: bool = False


def _first_difference(manifest: Manifest, root: Path) -> tuple[str | None, str]:
    """The first file (sorted by path) or dependency that differs from ``manifest``, and why."""
    listed = manifest["files"]
    found = packaged_files(root)
    for rel in sorted(set(listed) | set(found)):
        if rel not in found:
            return rel, f"{rel} is missing"
        if rel not in listed:
            return rel, f"{rel} is not in the release"
        if _sha256_file(found[rel]) != listed[rel]:
            return rel, f"{rel} differs from the release"
    deps = dependency_versions()
    for name, want in sorted(manifest["dependencies"].items()):
        have = deps.get(name, "absent")
        if have != want:
            return None, f"dependency {name} is {have}, the release has {want}"
    if manifest.get("config_schema") != CONFIG_SCHEMA:
        return None, f"configuration schema {CONFIG_SCHEMA}, the release has {manifest.get('config_schema')}"
    return None, ""


def check(cfg: ReleaseConfig, root: Path | None = None) -> Verdict:
    """Check the code under ``root`` (default :func:`code_root`) against the signed manifest of
    ``cfg``: the signature first (by the pinned key), then every file, dependency and the
    configuration schema. Never raises: a failure is a :class:`Verdict` with ``ok`` false."""
    if cfg.verify == "off":
        return Verdict(ok=True, off=True, problem="software verification is off ([release] verify = \"off\")")
    path = Path(cfg.manifest)
    try:
        data, manifest = read_manifest(path)
        digest = hashlib.sha256(data).hexdigest()
        kid = verify_signature(data, Path(f"{path}.sig"), cfg.public_key)
    except ReleaseError as exc:
        return Verdict(ok=False, problem=str(exc))
    first, why = _first_difference(manifest, root or code_root())
    version = str(manifest.get("version", ""))
    if why:
        return Verdict(ok=False, problem=why, first_file=first, digest=digest, version=version, key=kid)
    return Verdict(ok=True, digest=digest, version=version, key=kid)


def software_identity(verdict: Verdict, serial: str | None, firmware: str | None) -> dict[str, Any]:
    """The software identity shown in the floor's birth message, the display's about panel and
    every export: ``version``, ``manifest`` (digest, ``""`` without one), ``verified``
    (``"yes"``, ``"off"``, ``"failed"``), ``shoe_serial``, ``shoe_firmware``."""
    verified = "off" if verdict.off else ("yes" if verdict.ok else "failed")
    return {"version": verdict.version, "manifest": verdict.digest, "verified": verified,
            "shoe_serial": serial or "", "shoe_firmware": firmware or ""}


# --------------------------------------------------------------------------- seeded verification


def _file_or_empty(path: str | None, what: str) -> bytes:
    if not path:
        return b""
    try:
        return _read_small(Path(path), what)
    except ReleaseError:
        return b""


class SoftwareIdentity:
    """A running table's software identity and its seeded answers (docs/compliance.md,
    "Verification on demand"): the manifest's and the configuration's bytes as read at start
    (``b""`` when absent), the start's :class:`Verdict`, and ``shoe()``: the shoe's serial number
    and firmware now (``("", "")`` before its hello)."""

    def __init__(self, verdict: Verdict, cfg: ReleaseConfig,
                 shoe: Callable[[], tuple[str, str]] = lambda: ("", "")) -> None:
        self.verdict = verdict
        self.manifest = _file_or_empty(cfg.manifest, "release manifest")
        self.config = _file_or_empty(cfg.config_file, "table configuration")
        self.digest = hashlib.sha256(self.manifest).hexdigest() if self.manifest else ""
        self.shoe = shoe

    def public(self) -> dict[str, Any]:
        """:func:`software_identity` with the manifest digest as read (also when not verified)."""
        out = software_identity(self.verdict, *self.shoe())
        out["manifest"] = self.digest
        return out

    def answer(self, seed_text: object) -> dict[str, Any]:
        """The answer to a floor's or a lab's seed: ``seed``, ``answer`` (:func:`seeded_answer`
        hex) and :meth:`public`.

        :raises ReleaseError: a seed that is not :data:`MIN_SEED_HEX`..:data:`MAX_SEED_HEX` hex digits.
        """
        seed = parse_seed(seed_text)
        ident = self.public()
        return {"seed": seed_text, "answer": seeded_answer(seed, self.manifest, self.config, ident["shoe_serial"],
                                                           ident["shoe_firmware"]), **ident}


def parse_seed(text: object) -> bytes:
    """A verification seed written in hex, :data:`MIN_SEED_HEX`..:data:`MAX_SEED_HEX` digits.

    :raises ReleaseError: not hex, odd, too short or too long.
    """
    if not isinstance(text, str):
        raise ReleaseError("seed: not a text")
    if len(text) > MAX_SEED_HEX:
        raise ReleaseError(f"seed: {len(text)} characters, at most {MAX_SEED_HEX} hex digits")
    if len(text) < MIN_SEED_HEX:
        raise ReleaseError(f"seed: {len(text)} characters, at least {MIN_SEED_HEX} hex digits")
    if not re.fullmatch(r"[0-9a-fA-F]+", text) or len(text) % 2:
        raise ReleaseError("seed: not an even number of hex digits (0-9, a-f)")
    return bytes.fromhex(text)


def seeded_answer(seed: bytes, manifest: bytes, config: bytes, serial: str, firmware: str) -> str:
    """HMAC-SHA256 keyed with ``seed`` over manifest ‖ config ‖ shoe serial ‖ shoe firmware, each
    part preceded by its length as 8 bytes big-endian (so no two splits give one message); hex."""
    mac = hmac.new(seed, digestmod=hashlib.sha256)
    for part in (manifest, config, serial.encode("utf-8"), firmware.encode("utf-8")):
        mac.update(len(part).to_bytes(8, "big"))
        mac.update(part)
    return mac.hexdigest()
