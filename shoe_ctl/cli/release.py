"""``shoe-ctl release``: make, sign and verify the release manifest (docs/compliance.md,
"Software identity and the tilt").

``shoe-ctl release keygen --out KEY`` makes an Ed25519 signing key (PEM, 0600; kept offline by
whoever publishes releases) and prints the public half to pin in ``[release] public_key``.
``shoe-ctl release sign --key KEY [--out DIR]`` writes ``release.json`` (the manifest of the code
this command runs from) and ``release.json.sig``. ``shoe-ctl release verify [--config PATH]
[--manifest PATH]`` checks the installed code against the signed manifest as the service does at
start: exit status 0 when it matches, 1 when not (naming the first difference), 2 for bad usage.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from shoe_ctl.cli.args import Subparsers, default_config_path
from shoe_ctl.release import (
    ReleaseError,
    build_manifest,
    check,
    key_id,
    load_private_key,
    load_release_config,
    manifest_bytes,
    new_private_key,
    private_key_pem,
    public_key_text,
    sign_manifest,
)
from shoe_ctl.rules.profiles import ProfileError


def register(subparsers: Subparsers) -> None:
    """Add ``release`` to the CLI."""
    p = subparsers.add_parser("release", help="make, sign and verify the signed release manifest",
                              description="The signed release manifest: SHA-256 of every installed file, the "
                              "dependency versions and the configuration schema, signed with Ed25519.")
    sub = p.add_subparsers(dest="release_command", metavar="ACTION", required=True)
    k = sub.add_parser("keygen", help="make an Ed25519 signing key (PEM, 0600) and print its public half")
    k.add_argument("--out", required=True, help="the key file to write (must not exist)")
    k.set_defaults(func=keygen)
    s = sub.add_parser("sign", help="write release.json and release.json.sig for the code this command runs")
    s.add_argument("--key", required=True, help="the PEM signing key")
    s.add_argument("--out", default="release", help="folder to write into (default: release)")
    s.set_defaults(func=sign)
    v = sub.add_parser("verify", help="check the installed code against the signed manifest")
    v.add_argument("--config", default=str(default_config_path()), help="table configuration ([release])")
    v.add_argument("--manifest", default=None, help="manifest instead of [release] manifest")
    v.set_defaults(func=verify)


def _say(text: str) -> None:
    print(f"shoe-ctl release: {text}", file=sys.stderr, flush=True)


def keygen(args: argparse.Namespace) -> int:
    """Write a new key; 0, or 2 when the file exists or cannot be written."""
    key = new_private_key()
    try:
        fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        _say(f"{args.out}: {exc.strerror or exc} (a key is never overwritten)")
        return 2
    with os.fdopen(fd, "wb") as fh:
        fh.write(private_key_pem(key))
    print(f'public_key = "{public_key_text(key)}"')
    return 0


def sign(args: argparse.Namespace) -> int:
    """Sign the running code's manifest; 0, or 2 for an unusable key or folder."""
    try:
        key = load_private_key(args.key)
    except ReleaseError as exc:
        _say(str(exc))
        return 2
    manifest = build_manifest()
    data = manifest_bytes(manifest)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "release.json").write_bytes(data)
        (out / "release.json.sig").write_bytes(sign_manifest(data, key))
    except OSError as exc:
        _say(f"{out}: {exc.strerror or exc}")
        return 2
    print(f"signed shoe-ctl {manifest['version']}: {len(manifest['files'])} files, "
          f"{len(manifest['dependencies'])} dependencies, key {key_id(key.public_key())} -> {out}/release.json")
    return 0


def verify(args: argparse.Namespace) -> int:
    """Check as the service does at start; 0 when the code matches the signed manifest."""
    from dataclasses import replace

    try:
        cfg = load_release_config(args.config)
    except ProfileError as exc:
        _say(str(exc))
        return 2
    if args.manifest:
        cfg = replace(cfg, manifest=args.manifest, verify="on")
    verdict = check(cfg)
    if verdict.off:
        _say(f"{verdict.problem} in {args.config}: nothing checked")
        return 1
    if not verdict.ok:
        _say(f"software mismatch: {verdict.problem}")
        return 1
    print(f"shoe-ctl {verdict.version}: the installed code matches the release signed by key {verdict.key} "
          f"(manifest {verdict.digest[:16]})")
    return 0
