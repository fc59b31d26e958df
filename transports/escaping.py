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


def cut(text: str, most: int) -> str:
    """`text` to at most `most` characters, "..." after it if longer, cut between words: a secret it says (our token,
    which a peer may say back) is kept whole, to be masked by whoever holds it (masking.py), or left out, never cut
    in two (its first part is no secret we hold: it was shown, and traced, as it came)."""
    if len(text) <= most:
        return text
    kept = text[:most]
    if not text[most].isspace() and not kept[-1].isspace():  # the last word goes on past the cut: it goes, whole
        words = kept.rsplit(None, 1)
        kept = words[0] if len(words) == 2 else ""
    return f"{kept.rstrip()}..."
