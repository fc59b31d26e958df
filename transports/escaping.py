"""Text a peer controls, made safe to show on a terminal: nothing it sends can move the cursor, recolour the
screen, clear a line or disguise what it says (a bidirectional override). Every line we print of what came from
outside passes here (transports/printer.py for frames; lessons, reports and logs for names and reasons).
"""


def escape(text: str, *, keep_newlines: bool = False) -> str:
    """Make peer-controlled text safe to print: every invisible character becomes visible. Python's
    isprintable() is False for control characters (C0, C1, DEL), format characters such as the bidirectional
    overrides that can disguise text, and line or paragraph separators: what a terminal must never get raw."""
    if text.isprintable():
        return text  # nearly every line: nothing to do
    if keep_newlines and "\n" in text:  # a frame's body: each line is nearly always printable
        return "\n".join(escape(line) for line in text.split("\n"))
    def visible(ch: str) -> str:
        if ch.isprintable() or (keep_newlines and ch == "\n"):
            return ch
        return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"
    return "".join(visible(ch) for ch in text)
