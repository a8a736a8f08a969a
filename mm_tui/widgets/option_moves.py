"""Moving in a picker's list while its query keeps the focus (the file and session pickers)."""

from __future__ import annotations

from textual.widgets import OptionList


def move_highlight(option_list: OptionList, step: int) -> None:
    """Up and Down typed in the query move the list's highlight, kept inside the list."""
    if option_list.option_count:
        current = option_list.highlighted or 0
        option_list.highlighted = max(0, min(option_list.option_count - 1, current + step))


def highlighted_id(option_list: OptionList) -> str | None:
    """The id of the highlighted option, or None when nothing is highlighted."""
    if option_list.highlighted is None or not option_list.option_count:
        return None
    return option_list.get_option_at_index(option_list.highlighted).id
