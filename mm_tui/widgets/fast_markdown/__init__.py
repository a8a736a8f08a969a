"""mm-tui's own drawing of a streaming answer (docs/decisions/0003): one public class,
`FastAnswerBlock`. Its modules lean on Textual internals through `widgets/textual_private.py`;
`MM_TUI_MARKDOWN=stock` draws answers without any of them (`widgets/markdown_choice.py`).

- `fast_answer`: the block; pieces go to its stream on the window's clock.
- `answer_stream`: one widget drawing the answer's lines; only the open block parsed again.
- `markdown_lines`: Markdown blocks laid out as lines, as Textual's blocks draw them.
- `line_gate`: whole lines only, at a calm pace, while the text flows.
- `long_blocks`, `long_runs`: a huge list or table as one widget of lines.
- `compact_lists`, `aligned_table`: lists without blank rows, table columns aligned.
"""

from mm_tui.widgets.fast_markdown.fast_answer import FastAnswerBlock

__all__ = ["FastAnswerBlock"]
