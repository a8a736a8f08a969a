"""The strings the file tools share (SPEC §4), written once."""

from __future__ import annotations

EDIT_REJECTED = "[edit rejected by the user]"
MISSING_FILE = "{path} does not exist. Create it with write_file"
CANNOT_READ = "[error: cannot read {path}: {reason}]"
CANNOT_WRITE = "[error: cannot write {path}: {reason}]"
