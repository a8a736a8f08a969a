"""A URL as it may be shown or stored: never with the password of its userinfo.

A base URL such as `http://user:secret@host/v1` carries a credential; error lines, the top
line, session files and the debug log get `http://user:***@host/v1` instead.
"""

from __future__ import annotations

import urllib.parse

HIDDEN = "***"


def shown_url(url: str) -> str:
    """`url` with the password (or a lone user token) of its userinfo replaced by `***`."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return url.split("@")[-1] if "@" in url else url
    if "@" not in parts.netloc:
        return url
    userinfo, _, host = parts.netloc.rpartition("@")
    user, colon, _password = userinfo.partition(":")
    shown = f"{user}:{HIDDEN}" if colon else HIDDEN
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{shown}@{host}"))
