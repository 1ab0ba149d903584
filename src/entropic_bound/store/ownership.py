"""Which files of an output folder are the project's: a manifest of what it wrote, with checksums.

An output folder belongs to the user until proven ours. It is ours when it holds the manifest
:data:`MANIFEST_NAME` (written atomically after every file the project writes there), when it is
empty or missing, or when it holds a run store of ours (a folder written before manifests
existed). Anything else is refused in one line before any work, unless ``--force``; with
``--force`` the project writes its own files but never deletes anything.

A file is overwritten only when the manifest lists it with the checksum of its current content: a
file the user put there, or changed after the project wrote it, is refused (``--force`` allows).
The manifest lists a file's new checksum *before* the file is written (keeping the old one beside
it until the write is done), so a process killed between the two writes leaves a folder the next
run still recognises as its own.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..atomic import TMP_PREFIX, atomic_write_bytes
from ..errors import UserInputError

MANIFEST_NAME = ".entropic-bound-manifest.json"
MANIFEST_FORMAT = 1
#: Checksums of a file kept from another run writing the same folder at once (either may write last).
KEPT_FROM_OTHERS = 2


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_sha(path: Path) -> str | None:
    try:
        return sha256_of(path.read_bytes())
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UserInputError(f"Cannot read '{path}': {exc.strerror or exc}.") from None


def read_manifest(root: Path) -> dict[str, list[str]] | None:
    """``{relative path: [checksums the project wrote]}``, or None when ``root`` has no manifest."""
    path = root / MANIFEST_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data["files"]
        if data.get("format") != MANIFEST_FORMAT or not isinstance(files, dict):
            raise ValueError("unknown format")
        return {str(rel): [str(s) for s in shas] for rel, shas in files.items()}
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UserInputError(
            f"'{path}' is not a readable entropic-bound manifest ({exc}); move it aside or choose "
            "another --out."
        ) from None


def _is_empty(root: Path) -> bool:
    try:
        return not any(p for p in root.iterdir() if not p.name.startswith(TMP_PREFIX))
    except FileNotFoundError:
        return True


class OutputFolder:
    """An output folder proven ours (or forced): writes files and keeps the manifest of them."""

    def __init__(self, root: Path, files: dict[str, list[str]], *, trusted: bool, force: bool) -> None:
        self.root = root
        self.files = files
        self.trusted = trusted  # a folder that is ours but has no manifest yet: its files are ours
        self.force = force
        self.ours = trusted or bool(files)  # False: a folder written into only by --force
        self.written: set[str] = set()  # entries this process made, the only ones it saves over others

    def owns(self, rel: str, current_sha: str | None) -> bool:
        if current_sha is None or self.force:
            return True
        if current_sha in self.files.get(rel, ()):
            return True
        if current_sha in (read_manifest(self.root) or {}).get(rel, ()):
            return True  # written since this process read the manifest, by another run of ours
        return self.trusted and rel not in self.files

    def check_unchanged(self) -> None:
        """Refuse before any work when a file the project wrote was changed by the user since."""
        for rel in sorted(self.files):
            if not self.owns(rel, _file_sha(self.root / rel)):
                raise self._changed(rel)

    def _changed(self, rel: str, option: str = "--out") -> UserInputError:
        path = self.root / rel
        if rel in self.files:
            why = "was changed since entropic-bound wrote it"
        else:
            why = "exists and was not written by entropic-bound"
        return UserInputError(
            f"'{path}' {why}; move it aside, choose another {option}, or pass --force to overwrite it."
        )

    def write_bytes(self, rel: str, data: bytes) -> Path:
        """Write ``root/rel`` atomically if it is absent or ours; record it in the manifest."""
        path = self.root / rel
        current = _file_sha(path) if path.is_file() else None
        if not self.owns(rel, current):
            raise self._changed(rel)
        new = sha256_of(data)
        self.files[rel] = [new] + ([current] if current and current != new else [])
        self.written.add(rel)
        self._save()  # the new checksum is listed before the file changes (a kill in between is ours)
        written = atomic_write_bytes(path, data)
        if len(self.files[rel]) > 1:
            self.files[rel] = [new]
            self._save()
        return written

    def mark(self) -> None:
        """Write the manifest now, before the files: a folder whose writing is interrupted (an
        export killed half way) is still recognised as ours by the rerun."""
        self._save()

    def write_text(self, rel: str, text: str) -> Path:
        return self.write_bytes(rel, text.encode("utf-8"))

    def _save(self) -> None:
        """Merge with the manifest on disk (another run may be writing the same folder) and write it."""
        on_disk = read_manifest(self.root) or {}
        merged = dict(on_disk)
        for rel in self.written:  # ours first, then what another run listed (whichever wrote last)
            theirs = [sha for sha in on_disk.get(rel, ()) if sha not in self.files[rel]]
            merged[rel] = self.files[rel] + theirs[:KEPT_FROM_OTHERS]
        body = {
            "format": MANIFEST_FORMAT,
            "written_by": "entropic-bound",
            "files": dict(sorted(merged.items())),
        }
        atomic_write_bytes(self.root / MANIFEST_NAME, (json.dumps(body, indent=1) + "\n").encode())


def claim_output_folder(root: str | os.PathLike, *, force: bool = False, store_is_ours=None) -> OutputFolder:
    """The output folder at ``root`` if it is ours (or ``force``); a one-line refusal otherwise.

    ``store_is_ours(path) -> bool`` tells whether a run store found in the folder is the project's
    (it raises its own one-line error for a database that is not)."""
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise UserInputError(
            f"Output folder '{root}' exists and is not a folder; give a folder path with --out."
        )
    files = read_manifest(root) if root.is_dir() else None
    if files is not None:
        folder = OutputFolder(root, files, trusted=False, force=force)
    elif _is_empty(root):
        folder = OutputFolder(root, {}, trusted=True, force=force)
    elif force:
        folder = OutputFolder(root, {}, trusted=False, force=True)
    elif store_is_ours is not None and store_is_ours(root):
        folder = OutputFolder(root, {}, trusted=True, force=False)
    else:
        raise UserInputError(
            f"Output folder '{root}' is not empty and holds no entropic-bound output (no {MANIFEST_NAME}); "
            "choose a new or empty folder with --out, or pass --force to write into it (nothing there is "
            "deleted, files of the same names are overwritten)."
        )
    folder.check_unchanged()
    return folder


def claim_output_file(path: str | os.PathLike, *, force: bool = False, option: str) -> OutputFolder:
    """The folder of one output file named by ``option``, claimed for that file alone: the file is
    absent, or listed in the folder's manifest with its current checksum, or ``force``; a one-line
    refusal otherwise. Write the file with ``.write_bytes(path.name, data)`` (which lists it)."""
    path = Path(path)
    folder = OutputFolder(path.parent, read_manifest(path.parent) or {}, trusted=False, force=force)
    if path.is_file() and not folder.owns(path.name, _file_sha(path)):
        raise folder._changed(path.name, option)
    return folder
