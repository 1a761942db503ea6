"""An installed copy of shoe-ctl for the release tests: the packaged files copied into a scratch
``site`` folder (with the ``config`` link ``scripts/setup.sh pi`` makes), a signing key, the signed
manifest of that copy and a table configuration that pins the key; a process run with
``PYTHONPATH=<site>`` imports the copy."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from paths import ROOT

from shoe_ctl.release import (
    build_manifest,
    code_root,
    manifest_bytes,
    new_private_key,
    packaged_files,
    public_key_text,
    sign_manifest,
)


@dataclass
class Installed:
    site: Path
    manifest: Path
    config: Path
    key: object

    def flip_byte(self, rel: str, offset: int = 3) -> None:
        """Change one byte of the installed file ``rel``."""
        path = self.site / rel
        data = bytearray(path.read_bytes())
        data[offset] ^= 0x01
        path.write_bytes(bytes(data))


def install_copy(tmp: Path, table_toml: str = "") -> Installed:
    """Copy the packaged files under ``tmp/site``, sign their manifest into ``tmp/rel`` and write
    ``tmp/table.toml`` (``table_toml`` first, then ``[release]`` pinning the key, verify on)."""
    site = tmp / "site"
    for rel, src in packaged_files(code_root()).items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, site / rel)
    (site / "config").symlink_to(ROOT / "config")
    key = new_private_key()
    rel_dir = tmp / "rel"
    rel_dir.mkdir()
    data = manifest_bytes(build_manifest(site))
    (rel_dir / "release.json").write_bytes(data)
    (rel_dir / "release.json.sig").write_bytes(sign_manifest(data, key))
    cfg = tmp / "table.toml"
    cfg.write_text(f'{table_toml}[release]\nverify = "on"\npublic_key = "{public_key_text(key)}"\n'
                   f'manifest = "{rel_dir / "release.json"}"\n')
    return Installed(site, rel_dir / "release.json", cfg, key)
