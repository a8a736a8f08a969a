"""What the file tools and the guarded write share about the files they touch.

The bound of what a write reads of the file it replaces, the suffix of a write's temporary
file, and the words for a name that is not a regular file.
"""

from __future__ import annotations

import stat

#: The most a write or an edit reads of the file it replaces.
MAX_EDIT_BYTES = 16 << 20
#: A leftover of a killed atomic write (support/atomic_write.py names them so).
TEMPORARY_SUFFIX = ".mm-tmp"


def kind_of(mode: int) -> str:
    """`a FIFO`, `a socket`, `a character device`… for a mode that is not a regular file."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a file"
