"""Workflow prompts: the questions that take several tools, as a short plan that names them.

A prompt is a name, a title, a description, its arguments (each a bounded string) and a plan:
the steps, each naming the tool that does it. A prompt is offered to a caller only when every
tool it `needs` is offered to that caller (its backend, widgets, its client rule, its tenant:
`Dispatcher.listing`), and its plan mentions an optional tool (a better order, a map) only
when that tool is offered too, so a prompt never sends a model to a tool it cannot call.
How prompts travel on the wire is the protocol layer's business (protocol.handlers.prompts); they
cost nothing in `tools/list`. The decision: docs/adr/0036-prompts-resources-attribution.md.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

MAX_ARGUMENT_LENGTH = 500
"""The longest value a prompt argument takes, in characters."""
CREDIT_STEP = "Credit the data as the results' `attribution` says."
"""The last step of every plan: TomTom's terms ask that the data be credited (tools.attribution)."""

GEOCODE, FUZZY, POI_SEARCH, CATEGORIES = (
    "tomtom-geocode",
    "tomtom-fuzzy-search",
    "tomtom-poi-search",
    "tomtom-poi-categories",
)
ROUTING, MATRIX, OPTIMIZE, EV_ROUTING, EV_SEARCH, MAP = (
    "tomtom-routing",
    "tomtom-matrix-routing",
    "tomtom-optimize-waypoints",
    "tomtom-ev-routing",
    "tomtom-ev-search",
    "tomtom-dynamic-map",
)


@dataclass(frozen=True, slots=True)
class Argument:
    name: str
    description: str
    required: bool = True


type Plan = Callable[[Mapping[str, str], Collection[str]], list[str]]
"""The task and then its steps, for these arguments (the ones given, stripped), given the names
of the tools the caller is offered; an empty step is left out."""


class PromptArgumentError(ValueError):
    """The arguments of a prompt are wrong; the message names every one and what to send."""


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    title: str
    description: str
    arguments: tuple[Argument, ...]
    needs: tuple[str, ...]
    """The tools the plan cannot do without: the prompt is offered only with all of them."""
    plan: Plan

    def offered_to(self, offered: Collection[str]) -> bool:
        return all(tool in offered for tool in self.needs)

    def text(self, arguments: Mapping[str, str] | None, offered: Collection[str]) -> str:
        """The plan as one user message, or `PromptArgumentError` naming every wrong argument."""
        given = {name: value.strip() for name, value in (arguments or {}).items()}
        known = {argument.name for argument in self.arguments}
        problems = [
            f"{name}: unknown; {self.name} takes {', '.join(sorted(known))}" for name in sorted(set(given) - known)
        ]
        for argument in self.arguments:
            value = given.get(argument.name, "")
            if argument.required and not value:
                problems.append(f"{argument.name}: required ({argument.description})")
            elif len(value) > MAX_ARGUMENT_LENGTH:
                problems.append(f"{argument.name}: {len(value)} characters; at most {MAX_ARGUMENT_LENGTH}")
        if problems:
            raise PromptArgumentError("; ".join(problems))
        head, *rest = (step for step in self.plan({k: v for k, v in given.items() if v}, offered) if step)
        return "\n".join([head, *(f"{n}. {step}" for n, step in enumerate([*rest, CREDIT_STEP], 1))])


def _shown(offered: Collection[str]) -> str:
    """The closing step of a plan whose answer has a place: draw it, where a map is offered
    (none: an empty step, left out)."""
    if MAP in offered:
        return f"Show it on a map: `show_ui: true` on the call that answered, or {MAP}."
    return ""


def _trip(args: Mapping[str, str], offered: Collection[str]) -> list[str]:
    end = args.get("end", "")
    fixed = args.get("order", "").casefold() in {"fixed", "as given", "given"}
    ending = f" to {end}." if end else ", ending at the last stop."
    steps = [
        f"Plan a trip from {args['start']} via {args['stops']}{ending}",
        f"Find each place's [longitude, latitude] with {GEOCODE} ({FUZZY} for a business or a vague name).",
    ]
    if OPTIMIZE in offered and not fixed:
        steps.append(f"Find the fastest order of the stops with {OPTIMIZE} (`first`: the start; `last`: the end).")
    else:
        steps.append("Keep the stops in the order given.")
    steps.append(
        f"Plan the route with {ROUTING} (`locations`: start, stops, end, in that order); report the total and "
        "each leg's distance, time and traffic delay."
    )
    return [*steps, _shown(offered)]


def _nearest(args: Mapping[str, str], offered: Collection[str]) -> list[str]:
    what = args["what"]
    find = f"up to 10 candidates around it, nearest first, with {POI_SEARCH} (`position`, no `query`, `poiCategories`)"
    if CATEGORIES in offered:
        find = f"the category id for {what!r} with {CATEGORIES} (`filters`), then " + find
    find += "; for a brand or a name, the same with `query` instead"
    return [
        f"Find the {what} nearest to {args['place']} by driving time, not straight-line distance.",
        f"Find {args['place']}'s [longitude, latitude] with {GEOCODE}.",
        f"Find {find}.",
        f"Get the drive time to every candidate in one {MATRIX} call (`origins`: the place; `destinations`: the "
        "candidates); it names the nearest by time.",
        "Answer with the nearest by time: name, address, drive time and distance; say so when the nearest in a "
        "straight line is another.",
        _shown(offered),
    ]


def _ev_trip(args: Mapping[str, str], offered: Collection[str]) -> list[str]:
    vehicle = args.get("vehicle", "")
    battery = (
        f"from the vehicle ({vehicle})"
        if vehicle
        else "as the user states them (ask for the battery capacity and charge if unknown)"
    )
    steps = [
        f"Plan an electric-vehicle trip from {args['start']} to {args['destination']}.",
        f"Find both places' [longitude, latitude] with {GEOCODE}.",
        f"Plan the route and its charging stops with {EV_ROUTING}: `maxChargeInkWh` and `currentChargeInkWh` "
        f"{battery}; say which defaults it `assumed`.",
        "Report the distance, driving and charging time, and each charging stop: where, connector and power, "
        "how long, charge on arrival.",
    ]
    if EV_SEARCH in offered:
        steps.append(f"For other chargers near a stop, {EV_SEARCH} with its `position`.")
    return [*steps, _shown(offered)]


PROMPTS: tuple[Prompt, ...] = (
    Prompt(
        name="trip-with-stops",
        title="Plan a trip with stops",
        description="A route from a start through several stops, in the best order, with each leg's time.",
        arguments=(
            Argument("start", "Where the trip starts: an address or place name."),
            Argument("stops", "The places to visit, separated by semicolons."),
            Argument("end", "Where the trip ends; default: the last stop.", required=False),
            Argument("order", "`fixed` to keep the stops in the order given; default: the fastest order.", False),
        ),
        needs=(GEOCODE, ROUTING),
        plan=_trip,
    ),
    Prompt(
        name="nearest-by-drive-time",
        title="Nearest by drive time",
        description="The place of a kind (a pharmacy, a charger, a brand) that is quickest to drive to.",
        arguments=(
            Argument("place", "Where the user is: an address or place name."),
            Argument("what", "What to find, e.g. pharmacy, petrol station, IKEA."),
        ),
        needs=(GEOCODE, POI_SEARCH, MATRIX),
        plan=_nearest,
    ),
    Prompt(
        name="ev-trip",
        title="Plan an EV trip",
        description="A long electric-vehicle trip with its charging stops.",
        arguments=(
            Argument("start", "Where the trip starts: an address or place name."),
            Argument("destination", "Where it ends: an address or place name."),
            Argument("vehicle", "Battery capacity and charge, e.g. '75 kWh, 80 % charged'.", required=False),
        ),
        needs=(GEOCODE, EV_ROUTING),
        plan=_ev_trip,
    ),
)


def offered_prompts(offered: Collection[str]) -> list[Prompt]:
    """The prompts a caller offered these tools is offered, in declaration order."""
    return [prompt for prompt in PROMPTS if prompt.offered_to(offered)]
