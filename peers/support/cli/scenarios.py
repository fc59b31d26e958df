"""--scenario NAME, --list-scenarios and --request: the runs beyond the essay's.

The essay's run stays the default. A lesson (peers/support/lessons/, one module each)
is a short story of its own, told through the same support agent, printer and transport:
its frames are printed like any others. This module reads what a lesson says of itself
(its `LESSON`) for the rest of the run: the one line --list-scenarios prints, the help
`--scenario NAME --help` prints, what the demo peers are asked (`asked_of_peers`), the
servers of our own it needs (`own_apps`), and its `run`. The lesson itself is the run's
settings' (`settings.lesson`, found once as the flags were parsed, its flags merged in
then: command_line.py). It names no lesson. Not here: the lessons' stories, or how the
demo peers carry out what they are asked.
"""
from __future__ import annotations

from peers.support.cli.flags import dest_of

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome
    from peers.support.lessons import Lesson
    from peers.support.cli.settings import Settings


def listing() -> str:
    """--list-scenarios: one line per lesson, in teaching order."""
    from peers.support.lessons import every, name_of
    return "\n".join(f"{name_of(module.__name__):<16} {module.LESSON.about}" for module in every())


def readers_of(flag: str) -> list[str]:
    """The lessons that give `flag` a meaning, by name."""
    from peers.support.lessons import every, name_of
    return [name_of(module.__name__) for module in every() if flag in module.LESSON.reads]


def help_asked(argv: list[str]) -> str | None:
    """The help of the lesson `--scenario NAME` names, when --help (or -h) is asked for too."""
    if not {"--help", "-h"} & set(argv):
        return None
    named = [value for flag, value in zip(argv, argv[1:]) if flag == "--scenario"]
    named += [arg.split("=", 1)[1] for arg in argv if arg.startswith("--scenario=")]
    return help_for(named[-1]) if named else None


def help_for(name: str) -> str | None:
    """--scenario NAME --help: the lesson's own explanation (its docstring), then what it
    sets, reads and asks of the demo peers; None if no lesson has that name."""
    from peers.support.lessons import find
    module = find(name)
    if module is None:
        return None
    lesson: Lesson = module.LESSON
    lines = [(module.__doc__ or "").strip(), "", f"teaches: {lesson.teaches}"]
    if lesson.flags:
        lines.append(f"runs as: --scenario {name} " + " ".join(  # a repeatable flag: once per value
            flag if value is True else " ".join(f"{flag} {item}" for item in value) if isinstance(value, list)
            else f"{flag} {value}" for flag, value in lesson.flags.items())
            + " (where those flags are not given)")
    lines += [f"needs: {flag} {value}, whatever is given ({why})" for flag, (value, why) in lesson.needs.items()]
    lines += [f"reads {flag}: {meaning}" for flag, meaning in lesson.reads.items()]
    lines += [f"asks of {peer}: " + ", ".join(f"{key}={value!r}" for key, value in settings.items())
              for peer, settings in lesson.peers.items()]
    lines += [f"serves our own: {base_url}" for base_url in lesson.own_apps]
    return "\n".join(lines) + "\n"


def asked_of_peers(settings: Settings) -> dict[str, dict[str, Any]]:
    """What this run's lesson asks of the demo peers (peers/demo.py network()); {} for none."""
    return settings.lesson.LESSON.peers if settings.lesson is not None else {}


def own_apps(settings: Settings) -> dict[str, Any]:
    """base URL -> app, for the support agent's own servers this run needs."""
    return dict(settings.lesson.LESSON.own_apps) if settings.lesson is not None else {}


def generator(settings: Settings) -> Any:
    """The generate() a --request run asks (peers/support/model/generate.py); None without one."""
    if settings.request is None:
        return None
    from peers.support.model.generate import from_settings  # only a model's run needs it
    return from_settings(settings, offline=settings.lesson.LESSON.model if settings.lesson is not None else None)


def run(settings: Settings, story: Steps, card_urls: list[str],
        generate: Any) -> list[Outcome] | None:
    """The lesson asked for, given the flags it reads; or --request: a model chooses."""
    module = settings.lesson
    if module is None:
        from peers.support.model import planner
        return planner.run_request(story, card_urls, settings.request, generate,
                                   show_prompts=settings.show_prompts, verbose=settings.verbose)
    for flag, (value, why) in module.LESSON.needs.items():  # set whatever was given (command_line): said once
        story.say(f"[support] this lesson runs with {flag} {value}, whatever the command line says: {why}")
    given = {dest_of(flag): getattr(settings, dest_of(flag)) for flag in module.LESSON.reads}
    if "--request" in module.LESSON.reads:  # a model reads the request: the one the flags chose
        given["generate"] = generate
    return module.run(story, card_urls, **given)
