"""A PDDL test suite of our own: six classical domains and seeded problem generators.

The domains (blocksworld with four typed operators, gripper, typed logistics, miconic,
untyped depots and untyped satellite) are the well-known planning benchmarks, written
here from their descriptions for plansmith's tests. No file of any other suite is
copied. The generators are deterministic: the same arguments give the same text,
byte for byte, under any ``PYTHONHASHSEED`` (every choice comes from a seeded
``random.Random`` over sorted lists).

Each :class:`Task` carries what its generator wrote (object, init and goal atom
counts), so a parser test can compare what it reads with what was written, and, for
the problems built to have one, the optimal plan length with the reason it is optimal
(``optimal``), so a search test can check a length without an outside oracle.

Parser quirks the suite keeps on purpose (older PDDL readers broke on them):

- upper-case names and keywords: ``(define (domain BLOCKS)``, every blocks problem
  (``(:INIT``, ``(ONTABLE A)``, ``(:goal (AND ...))``, the type ``BLOCK``) and the
  logistics action names (``LOAD-TRUCK``); :data:`BLOCKS_UPPER_CASE` is a small
  hand-written example;
- ``(:types ...)`` used while ``:requirements`` declares only ``:strips`` (miconic);
- no ``:requirements`` at all, and types as unary predicates (gripper, depot).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from plansmith.model import Domain, Problem

__all__ = [
    "BLOCKS_UPPER_CASE",
    "DOMAINS",
    "Task",
    "blocks_random",
    "blocks_reversal",
    "blocks_task",
    "depot_random",
    "depot_shipment",
    "domain",
    "gripper",
    "gripper_optimum",
    "load",
    "logistics_local",
    "logistics_random",
    "logistics_relay",
    "miconic_random",
    "miconic_upward",
    "satellite_random",
    "satellite_tour",
    "suite",
    "task",
    "write",
]

# -- the domains ---------------------------------------------------------------------------

BLOCKS = """\
; Blocksworld: one arm moves blocks between the table and towers.
; Four typed STRIPS operators. Written for plansmith's tests.
(define (domain BLOCKS)
  (:requirements :strips :typing)
  (:types block)
  (:predicates
    (on ?top - block ?below - block)
    (ontable ?b - block)
    (clear ?b - block)
    (handempty)
    (holding ?b - block))

  ; take a clear block from the table
  (:action pick-up
    :parameters (?b - block)
    :precondition (and (ontable ?b) (clear ?b) (handempty))
    :effect (and (holding ?b) (not (ontable ?b)) (not (clear ?b)) (not (handempty))))

  ; set the held block on the table
  (:action put-down
    :parameters (?b - block)
    :precondition (holding ?b)
    :effect (and (ontable ?b) (clear ?b) (handempty) (not (holding ?b))))

  ; set the held block on a clear one
  (:action stack
    :parameters (?b - block ?onto - block)
    :precondition (and (holding ?b) (clear ?onto))
    :effect (and (on ?b ?onto) (clear ?b) (handempty)
                 (not (holding ?b)) (not (clear ?onto))))

  ; take a clear block from the top of a tower
  (:action unstack
    :parameters (?b - block ?from - block)
    :precondition (and (handempty) (clear ?b) (on ?b ?from))
    :effect (and (holding ?b) (clear ?from)
                 (not (on ?b ?from)) (not (clear ?b)) (not (handempty))))
)
"""

GRIPPER = """\
; Gripper: a robot with two hands carries balls from one room to another.
; Untyped: rooms, balls and hands are told apart by unary predicates.
(define (domain gripper-strips)
  (:predicates (room ?r) (ball ?b) (gripper ?g)
               (at-robby ?r) (at ?b ?r) (free ?g) (carry ?b ?g))

  (:action move
    :parameters (?from ?to)
    :precondition (and (room ?from) (room ?to) (at-robby ?from))
    :effect (and (at-robby ?to) (not (at-robby ?from))))

  (:action pick
    :parameters (?b ?r ?g)
    :precondition (and (ball ?b) (room ?r) (gripper ?g)
                       (at ?b ?r) (at-robby ?r) (free ?g))
    :effect (and (carry ?b ?g) (not (at ?b ?r)) (not (free ?g))))

  (:action drop
    :parameters (?b ?r ?g)
    :precondition (and (ball ?b) (room ?r) (gripper ?g)
                       (carry ?b ?g) (at-robby ?r))
    :effect (and (at ?b ?r) (free ?g) (not (carry ?b ?g))))
)
"""

LOGISTICS = """\
; Logistics: trucks move packages inside a city, airplanes between airports.
; Typed STRIPS; the action names are upper case on purpose.
(define (domain logistics)
  (:requirements :strips :typing)
  (:types truck airplane - vehicle
          package vehicle - physobj
          airport location - place
          city place physobj - object)
  (:predicates (in-city ?p - place ?c - city)
               (at ?o - physobj ?p - place)
               (in ?pkg - package ?v - vehicle))

  (:action LOAD-TRUCK
    :parameters (?pkg - package ?t - truck ?p - place)
    :precondition (and (at ?t ?p) (at ?pkg ?p))
    :effect (and (in ?pkg ?t) (not (at ?pkg ?p))))

  (:action LOAD-AIRPLANE
    :parameters (?pkg - package ?a - airplane ?p - place)
    :precondition (and (at ?a ?p) (at ?pkg ?p))
    :effect (and (in ?pkg ?a) (not (at ?pkg ?p))))

  (:action UNLOAD-TRUCK
    :parameters (?pkg - package ?t - truck ?p - place)
    :precondition (and (at ?t ?p) (in ?pkg ?t))
    :effect (and (at ?pkg ?p) (not (in ?pkg ?t))))

  (:action UNLOAD-AIRPLANE
    :parameters (?pkg - package ?a - airplane ?p - place)
    :precondition (and (at ?a ?p) (in ?pkg ?a))
    :effect (and (at ?pkg ?p) (not (in ?pkg ?a))))

  (:action DRIVE-TRUCK
    :parameters (?t - truck ?from - place ?to - place ?c - city)
    :precondition (and (at ?t ?from) (in-city ?from ?c) (in-city ?to ?c))
    :effect (and (at ?t ?to) (not (at ?t ?from))))

  (:action FLY-AIRPLANE
    :parameters (?a - airplane ?from - airport ?to - airport)
    :precondition (at ?a ?from)
    :effect (and (at ?a ?to) (not (at ?a ?from))))
)
"""

MICONIC = """\
; Miconic: an elevator picks passengers up at their floor and lets them out at
; their destination. It uses (:types ...) while :requirements says only :strips.
(define (domain miconic)
  (:requirements :strips)
  (:types passenger floor - object)
  (:predicates
    (origin ?p - passenger ?f - floor)   ; where the passenger waits
    (destin ?p - passenger ?f - floor)   ; where the passenger goes
    (above ?low - floor ?high - floor)   ; ?high is above ?low (static)
    (boarded ?p - passenger)
    (served ?p - passenger)
    (lift-at ?f - floor))

  (:action board
    :parameters (?f - floor ?p - passenger)
    :precondition (and (lift-at ?f) (origin ?p ?f))
    :effect (boarded ?p))

  (:action depart
    :parameters (?f - floor ?p - passenger)
    :precondition (and (lift-at ?f) (destin ?p ?f) (boarded ?p))
    :effect (and (served ?p) (not (boarded ?p))))

  (:action up
    :parameters (?from - floor ?to - floor)
    :precondition (and (lift-at ?from) (above ?from ?to))
    :effect (and (lift-at ?to) (not (lift-at ?from))))

  (:action down
    :parameters (?from - floor ?to - floor)
    :precondition (and (lift-at ?from) (above ?to ?from))
    :effect (and (lift-at ?to) (not (lift-at ?from))))
)
"""

DEPOT = """\
; Depots: hoists stack crates on pallets and on each other, trucks carry crates
; between depots and distributors. Untyped: 15 predicates, 9 of them stand for types.
(define (domain depot)
  (:predicates
    (at ?x ?place) (on ?crate ?below) (in ?crate ?truck) (lifting ?hoist ?crate)
    (available ?hoist) (clear ?surface)
    (place ?x) (locatable ?x) (depot ?x) (distributor ?x) (truck ?x) (hoist ?x)
    (surface ?x) (pallet ?x) (crate ?x))

  (:action drive
    :parameters (?t ?from ?to)
    :precondition (and (truck ?t) (place ?from) (place ?to) (at ?t ?from))
    :effect (and (at ?t ?to) (not (at ?t ?from))))

  (:action lift
    :parameters (?h ?c ?below ?p)
    :precondition (and (hoist ?h) (crate ?c) (surface ?below) (place ?p)
                       (at ?h ?p) (available ?h) (at ?c ?p) (on ?c ?below) (clear ?c))
    :effect (and (lifting ?h ?c) (clear ?below)
                 (not (at ?c ?p)) (not (clear ?c)) (not (available ?h)) (not (on ?c ?below))))

  (:action drop
    :parameters (?h ?c ?onto ?p)
    :precondition (and (hoist ?h) (crate ?c) (surface ?onto) (place ?p)
                       (at ?h ?p) (at ?onto ?p) (clear ?onto) (lifting ?h ?c))
    :effect (and (available ?h) (at ?c ?p) (clear ?c) (on ?c ?onto)
                 (not (lifting ?h ?c)) (not (clear ?onto))))

  (:action load
    :parameters (?h ?c ?t ?p)
    :precondition (and (hoist ?h) (crate ?c) (truck ?t) (place ?p)
                       (at ?h ?p) (at ?t ?p) (lifting ?h ?c))
    :effect (and (in ?c ?t) (available ?h) (not (lifting ?h ?c))))

  (:action unload
    :parameters (?h ?c ?t ?p)
    :precondition (and (hoist ?h) (crate ?c) (truck ?t) (place ?p)
                       (at ?h ?p) (at ?t ?p) (available ?h) (in ?c ?t))
    :effect (and (lifting ?h ?c) (not (in ?c ?t)) (not (available ?h))))
)
"""

SATELLITE = """\
; Satellite: satellites turn between directions and take images with their
; instruments, which must be switched on and calibrated first. Untyped.
(define (domain satellite)
  (:requirements :strips)
  (:predicates
    (on-board ?i ?s) (supports ?i ?m) (pointing ?s ?d) (power-avail ?s)
    (power-on ?i) (calibrated ?i) (have-image ?d ?m) (calibration-target ?i ?d)
    (satellite ?x) (direction ?x) (instrument ?x) (mode ?x))

  (:action turn-to
    :parameters (?s ?to ?from)
    :precondition (and (satellite ?s) (direction ?to) (direction ?from) (pointing ?s ?from))
    :effect (and (pointing ?s ?to) (not (pointing ?s ?from))))

  (:action switch-on
    :parameters (?i ?s)
    :precondition (and (instrument ?i) (satellite ?s) (on-board ?i ?s) (power-avail ?s))
    :effect (and (power-on ?i) (not (calibrated ?i)) (not (power-avail ?s))))

  (:action switch-off
    :parameters (?i ?s)
    :precondition (and (instrument ?i) (satellite ?s) (on-board ?i ?s) (power-on ?i))
    :effect (and (power-avail ?s) (not (power-on ?i))))

  (:action calibrate
    :parameters (?s ?i ?d)
    :precondition (and (satellite ?s) (instrument ?i) (direction ?d) (on-board ?i ?s)
                       (calibration-target ?i ?d) (pointing ?s ?d) (power-on ?i))
    :effect (calibrated ?i))

  (:action take-image
    :parameters (?s ?d ?i ?m)
    :precondition (and (satellite ?s) (direction ?d) (instrument ?i) (mode ?m)
                       (calibrated ?i) (on-board ?i ?s) (supports ?i ?m)
                       (power-on ?i) (pointing ?s ?d))
    :effect (have-image ?d ?m))
)
"""

DOMAINS: dict[str, str] = {
    "blocks": BLOCKS,
    "depot": DEPOT,
    "gripper": GRIPPER,
    "logistics": LOGISTICS,
    "miconic": MICONIC,
    "satellite": SATELLITE,
}

# A small blocks problem written out by hand in upper case (``(:OBJECTS``, ``(:INIT``,
# ``(:goal (AND``), objects listed out of order: two towers, each to be set crosswise
# on the other.
BLOCKS_UPPER_CASE = """\
(define (problem BLOCKS-4-HAND)
  (:DOMAIN BLOCKS)
  (:OBJECTS E A D B - block)
  (:INIT (HANDEMPTY) (ONTABLE A) (ON E A) (CLEAR E)
         (ONTABLE D) (ON B D) (CLEAR B))
  (:goal (AND (ON A B) (ON D E)))
)
"""


# -- a generated problem -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Task:
    """One generated problem: its domain's name, a file name, the PDDL text, and what
    the generator wrote (``objects`` in ``(:objects ...)``, ``init`` and ``goal`` atoms).
    ``optimal`` is the optimal plan length where the construction fixes it (None for
    random problems)."""

    domain: str
    name: str
    text: str
    objects: int
    init: int
    goal: int
    optimal: int | None = None

    @property
    def id(self) -> str:
        return f"{self.domain}/{self.name}"


def _render(
    domain_name: str,
    problem_name: str,
    objects: Sequence[tuple[Sequence[str], str | None]],
    init: Sequence[str],
    goal: Sequence[str],
    *,
    upper: bool = False,
) -> str:
    """The problem text: ``objects`` as ``(names, type or None)`` groups, atoms as
    ``"pred a b"`` strings, eight atoms to a line."""

    def case(s: str) -> str:
        return s.upper() if upper else s

    obj_lines = [
        " ".join(names) + (f" - {kind}" if kind else "") for names, kind in objects if names
    ]
    init_lines = [" ".join(f"({case(a)})" for a in init[i : i + 8]) for i in range(0, len(init), 8)]
    goal_atoms = " ".join(f"({case(a)})" for a in goal)
    return "\n".join(
        [
            f"(define (problem {case(problem_name)})",
            f"  (:domain {case(domain_name)})",
            "  (:objects",
            *(f"    {case(line)}" for line in obj_lines),
            "  )",
            "  (:INIT" if upper else "  (:init",
            *(f"    {line}" for line in init_lines),
            "  )",
            f"  (:goal ({'AND' if upper else 'and'} {goal_atoms}))",
            ")",
            "",
        ]
    )


def _task(
    domain_name: str,
    name: str,
    objects: Sequence[tuple[Sequence[str], str | None]],
    init: Sequence[str],
    goal: Sequence[str],
    *,
    pddl_domain: str | None = None,
    upper: bool = False,
    optimal: int | None = None,
) -> Task:
    text = _render(pddl_domain or domain_name, name, objects, init, goal, upper=upper)
    count = sum(len(names) for names, _ in objects)
    return Task(domain_name, f"{name}.pddl", text, count, len(init), len(goal), optimal)


# -- blocks --------------------------------------------------------------------------------


def _towers_atoms(towers: Sequence[Sequence[str]]) -> list[str]:
    """``ontable``, ``on`` and ``clear`` atoms of towers given bottom to top."""
    out: list[str] = []
    for tower in towers:
        out.append(f"ontable {tower[0]}")
        out.extend(f"on {top} {below}" for below, top in itertools.pairwise(tower))
        out.append(f"clear {tower[-1]}")
    return out


def blocks_task(
    name: str,
    start: Sequence[Sequence[str]],
    target: Sequence[Sequence[str]],
    *,
    optimal: int | None = None,
) -> Task:
    """Blocks from towers ``start`` to towers ``target`` (bottom to top). The goal
    lists only ``on`` atoms, like the competition problems; the text is upper case."""
    blocks = [b for tower in start for b in tower]
    init = [*_towers_atoms(start), "handempty"]
    goal = [f"on {top} {below}" for tower in target for below, top in itertools.pairwise(tower)]
    return _task(
        "blocks",
        name,
        [(blocks, "block")],
        init,
        goal,
        pddl_domain="BLOCKS",
        upper=True,
        optimal=optimal,
    )


def _random_towers(blocks: Sequence[str], rng: random.Random) -> list[list[str]]:
    order = list(blocks)
    rng.shuffle(order)
    towers: list[list[str]] = []
    for b in order:
        if towers and rng.random() < 0.6:
            rng.choice(towers).append(b)
        else:
            towers.append([b])
    return towers


def _block_names(n: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [letters[i] if n <= 26 else f"b{i + 1}" for i in range(n)]


def blocks_random(n: int, seed: int) -> Task:
    """``n`` blocks in random towers, to other random towers (at least one ``on``
    goal atom false at the start)."""
    rng = random.Random(f"blocks-{n}-{seed}")
    blocks = _block_names(n)
    while True:
        start, target = _random_towers(blocks, rng), _random_towers(blocks, rng)
        goal = {a for a in _towers_atoms(target) if a.startswith("on ")}
        if goal - set(_towers_atoms(start)):
            return blocks_task(f"blocks-{n}-s{seed}", start, target)


def blocks_reversal(n: int) -> Task:
    """One tower of ``n`` >= 2 blocks, to be turned upside down.

    Optimal length 2n: blocks 1..n-1 (bottom to top) each need a stack on the block
    that starts above it, i.e. a pick-up or unstack and a stack, 2(n-1) actions. Block
    n-1 can only be taken once block n is off it, so block n is unstacked too, and
    the arm must set it down (put-down or stack) before it takes block n-1: 2 more.
    2n suffice: put block n on the table, then stack n-1 on n, ..., 1 on 2.
    """
    blocks = _block_names(n)
    return blocks_task(f"reverse-{n}", [blocks], [blocks[::-1]], optimal=2 * n)


# -- gripper -------------------------------------------------------------------------------


def gripper_optimum(balls: int) -> int:
    """The optimal plan length for ``balls`` >= 1 balls from room a to room b.

    Every ball needs a pick and a drop (2 per ball). Two hands carry at most two
    balls at a time, so the robot goes from a to b at least ceil(balls / 2) times,
    and between two such moves it comes back once: ceil(balls / 2) - 1 moves. The
    plan "pick two, move, drop two, move back" reaches exactly that (no move back
    after the last trip): 2 balls + 2 ceil(balls / 2) - 1, i.e. 3 balls - 1 for an
    even number of balls and 3 balls for an odd one.
    """
    return 2 * balls + 2 * -(-balls // 2) - 1


def gripper(balls: int) -> Task:
    """``balls`` balls and the robot in room a, two free hands; all balls to room b."""
    names = [f"ball{i + 1}" for i in range(balls)]
    init = [
        "room rooma",
        "room roomb",
        *(f"ball {b}" for b in names),
        "gripper left",
        "gripper right",
        "at-robby rooma",
        *(f"at {b} rooma" for b in names),
        "free left",
        "free right",
    ]
    return _task(
        "gripper",
        f"gripper-{balls}",
        [(["rooma", "roomb"], None), (names, None), (["left", "right"], None)],
        init,
        [f"at {b} roomb" for b in names],
        pddl_domain="gripper-strips",
        optimal=gripper_optimum(balls),
    )


# -- logistics -----------------------------------------------------------------------------


def _logistics(
    name: str,
    *,
    cities: int,
    places_per_city: int,
    trucks: Sequence[tuple[str, str]],
    planes: Sequence[tuple[str, str]],
    packages: Sequence[tuple[str, str, str]],
    optimal: int | None = None,
) -> Task:
    """Cities ``c1..``, each with airport ``apt<i>`` and locations ``pos<i>-<j>``;
    ``trucks`` and ``planes`` as ``(name, place)``; packages as ``(name, from, to)``."""
    city_names = [f"c{i + 1}" for i in range(cities)]
    airports = [f"apt{i + 1}" for i in range(cities)]
    locations = [f"pos{i + 1}-{j + 1}" for i in range(cities) for j in range(places_per_city - 1)]
    init = [
        *(f"in-city apt{i + 1} c{i + 1}" for i in range(cities)),
        *(f"in-city {loc} c{loc[3:].split('-')[0]}" for loc in locations),
        *(f"at {t} {p}" for t, p in trucks),
        *(f"at {a} {p}" for a, p in planes),
        *(f"at {pkg} {src}" for pkg, src, _ in packages),
    ]
    return _task(
        "logistics",
        name,
        [
            ([p for p, _, _ in packages], "package"),
            ([t for t, _ in trucks], "truck"),
            ([a for a, _ in planes], "airplane"),
            (city_names, "city"),
            (airports, "airport"),
            (locations, "location"),
        ],
        init,
        [f"at {pkg} {dst}" for pkg, _, dst in packages],
        optimal=optimal,
    )


def logistics_local(packages: int) -> Task:
    """One city; ``packages`` packages and the truck at pos1-1, all for the airport.
    Optimal 2 packages + 1: a load and an unload each, and the truck drives once."""
    return _logistics(
        f"local-{packages}",
        cities=1,
        places_per_city=2,
        trucks=[("truck1", "pos1-1")],
        planes=[("plane1", "apt1")],
        packages=[(f"pkg{i + 1}", "pos1-1", "apt1") for i in range(packages)],
        optimal=2 * packages + 1,
    )


def logistics_relay(packages: int) -> Task:
    """Two cities; ``packages`` packages at pos1-1 (with truck1) for pos2-1 (truck2
    waits at apt2, the plane at apt1). Each package changes city, so it rides truck1,
    the plane and truck2, a load and an unload each (6 per package), and truck1,
    the plane and truck2 move at least once each: optimal 6 packages + 3."""
    return _logistics(
        f"relay-{packages}",
        cities=2,
        places_per_city=2,
        trucks=[("truck1", "pos1-1"), ("truck2", "apt2")],
        planes=[("plane1", "apt1")],
        packages=[(f"pkg{i + 1}", "pos1-1", "pos2-1") for i in range(packages)],
        optimal=6 * packages + 3,
    )


def logistics_random(cities: int, places: int, packages: int, planes: int, seed: int) -> Task:
    """A truck in every city, ``planes`` airplanes at random airports, packages from a
    random place to another random place (every goal false at the start)."""
    rng = random.Random(f"logistics-{cities}-{places}-{packages}-{planes}-{seed}")
    all_places = [
        f"apt{i + 1}" if j == 0 else f"pos{i + 1}-{j}" for i in range(cities) for j in range(places)
    ]

    def city_places(i: int) -> list[str]:
        return [p for p in all_places if p == f"apt{i + 1}" or p.startswith(f"pos{i + 1}-")]

    trucks = [(f"truck{i + 1}", rng.choice(city_places(i))) for i in range(cities)]
    airports = [f"apt{i + 1}" for i in range(cities)]
    plane_at = [(f"plane{i + 1}", rng.choice(airports)) for i in range(planes)]
    pkgs = []
    for i in range(packages):
        src, dst = rng.sample(all_places, 2)
        pkgs.append((f"pkg{i + 1}", src, dst))
    return _logistics(
        f"logistics-{cities}-{packages}-s{seed}",
        cities=cities,
        places_per_city=places,
        trucks=trucks,
        planes=plane_at,
        packages=pkgs,
    )


# -- miconic -------------------------------------------------------------------------------


def _miconic(
    name: str, floors: int, start: int, trips: Sequence[tuple[int, int]], optimal: int | None
) -> Task:
    passengers = [f"p{i}" for i in range(len(trips))]
    floor_names = [f"f{i}" for i in range(floors)]
    init = [f"above f{i} f{j}" for i in range(floors) for j in range(i + 1, floors)]
    for p, (src, dst) in zip(passengers, trips, strict=True):
        init += [f"origin {p} f{src}", f"destin {p} f{dst}"]
    init.append(f"lift-at f{start}")
    return _task(
        "miconic",
        name,
        [(passengers, "passenger"), (floor_names, "floor")],
        init,
        [f"served {p}" for p in passengers],
        optimal=optimal,
    )


def miconic_upward(passengers: int) -> Task:
    """Everyone waits with the lift on floor 0, passenger i goes to floor i + 1.
    Optimal 3 passengers: a board and a depart each, and the lift must stop on
    each of the ``passengers`` destination floors, one move each (up goes to any
    floor above, so no more are needed)."""
    trips = [(0, i + 1) for i in range(passengers)]
    return _miconic(f"upward-{passengers}", passengers + 1, 0, trips, 3 * passengers)


def miconic_random(passengers: int, floors: int, seed: int) -> Task:
    """Passengers from a random floor to another; the lift starts on floor 0."""
    rng = random.Random(f"miconic-{passengers}-{floors}-{seed}")
    trips = [tuple(rng.sample(range(floors), 2)) for _ in range(passengers)]
    return _miconic(
        f"miconic-{passengers}-{floors}-s{seed}",
        floors,
        0,
        [(a, b) for a, b in trips],
        None,
    )


# -- depot ---------------------------------------------------------------------------------


def _depot(
    name: str,
    *,
    depots: int,
    distributors: int,
    trucks: Sequence[str],
    stacks: Sequence[Sequence[str]],
    target: Sequence[Sequence[str]],
    optimal: int | None = None,
) -> Task:
    """A hoist and a pallet at every place (``pallet<i>`` and ``hoist<i>`` at the
    i-th place), ``trucks`` at the named places, ``stacks[i]`` the crates on pallet i
    bottom to top, and ``target[i]`` the goal tower on pallet i (all ``on`` atoms)."""
    places = [f"depot{i}" for i in range(depots)] + [f"distributor{i}" for i in range(distributors)]
    pallets = [f"pallet{i}" for i in range(len(places))]
    hoists = [f"hoist{i}" for i in range(len(places))]
    crates = sorted((c for s in stacks for c in s), key=lambda c: int(c[5:]))
    truck_names = [f"truck{i}" for i in range(len(trucks))]
    init: list[str] = []
    for i, place in enumerate(places):
        kind = "depot" if place.startswith("depot") else "distributor"
        init += [f"place {place}", f"{kind} {place}"]
        init += [f"pallet pallet{i}", f"surface pallet{i}", f"at pallet{i} {place}"]
        init += [f"hoist hoist{i}", f"locatable hoist{i}", f"at hoist{i} {place}"]
        init.append(f"available hoist{i}")
    for t, where in zip(truck_names, trucks, strict=True):
        init += [f"truck {t}", f"locatable {t}", f"at {t} {where}"]
    for i, stack in enumerate(stacks):
        below = f"pallet{i}"
        for c in stack:
            init += [f"crate {c}", f"surface {c}", f"locatable {c}"]
            init += [f"at {c} {places[i]}", f"on {c} {below}"]
            below = c
        init.append(f"clear {below}")
    goal = []
    for i, tower in enumerate(target):
        below = f"pallet{i}"
        for c in tower:
            goal.append(f"on {c} {below}")
            below = c
    return _task(
        "depot",
        name,
        [(places, None), (truck_names, None), (pallets, None), (crates, None), (hoists, None)],
        init,
        goal,
        optimal=optimal,
    )


def depot_shipment(crates: int) -> Task:
    """``crates`` crates stacked on the depot's pallet, a truck at the depot; the
    same crates in one stack (top crate at the bottom) on the distributor's pallet.
    Every crate changes place, so it is lifted, loaded, unloaded and dropped (4
    actions each; its first lifting can only come from a lift), and the truck
    drives once: optimal 4 crates + 1."""
    names = [f"crate{i}" for i in range(crates)]
    return _depot(
        f"shipment-{crates}",
        depots=1,
        distributors=1,
        trucks=["depot0"],
        stacks=[names, []],
        target=[[], names[::-1]],
        optimal=4 * crates + 1,
    )


def depot_random(depots: int, distributors: int, trucks: int, crates: int, seed: int) -> Task:
    """Crates in random stacks on the pallets, trucks at random places, and a random
    goal configuration of all crates (at least one goal atom false at the start)."""
    rng = random.Random(f"depot-{depots}-{distributors}-{trucks}-{crates}-{seed}")
    places = [f"depot{i}" for i in range(depots)] + [f"distributor{i}" for i in range(distributors)]
    names = [f"crate{i}" for i in range(crates)]

    def stacks() -> list[list[str]]:
        out: list[list[str]] = [[] for _ in places]
        order = list(names)
        rng.shuffle(order)
        for c in order:
            out[rng.randrange(len(places))].append(c)
        return out

    start = stacks()
    while True:
        target = stacks()
        if target != start:
            break
    where = [rng.choice(places) for _ in range(trucks)]
    return _depot(
        f"depot-{depots + distributors}-{crates}-s{seed}",
        depots=depots,
        distributors=distributors,
        trucks=where,
        stacks=start,
        target=target,
    )


# -- satellite -----------------------------------------------------------------------------


def _satellite(
    name: str,
    *,
    instruments: Sequence[tuple[str, str, Sequence[str], str]],
    pointing: Sequence[tuple[str, str]],
    modes: Sequence[str],
    directions: Sequence[str],
    images: Sequence[tuple[str, str]],
    optimal: int | None = None,
) -> Task:
    """``instruments`` as ``(name, satellite, modes, calibration target)``,
    ``pointing`` as ``(satellite, direction)``, goal ``images`` as ``(direction, mode)``."""
    sats = [s for s, _ in pointing]
    init: list[str] = []
    for s, d in pointing:
        init += [f"satellite {s}", f"pointing {s} {d}", f"power-avail {s}"]
    for i, s, supported, target in instruments:
        init += [f"instrument {i}", f"on-board {i} {s}", f"calibration-target {i} {target}"]
        init += [f"supports {i} {m}" for m in supported]
    init += [f"mode {m}" for m in modes]
    init += [f"direction {d}" for d in directions]
    return _task(
        "satellite",
        name,
        [
            (sats, None),
            ([i for i, _, _, _ in instruments], None),
            (modes, None),
            (directions, None),
        ],
        init,
        [f"have-image {d} {m}" for d, m in images],
        optimal=optimal,
    )


def satellite_tour(images: int) -> Task:
    """One satellite pointing at its instrument's calibration target star0, images of
    planet1..planet<images> in one mode. Optimal 2 images + 2: switch on and calibrate
    once, and per image one turn (each planet is another direction) and one shot."""
    planets = [f"planet{i + 1}" for i in range(images)]
    return _satellite(
        f"tour-{images}",
        instruments=[("camera", "sat0", ["infrared"], "star0")],
        pointing=[("sat0", "star0")],
        modes=["infrared"],
        directions=["star0", *planets],
        images=[(p, "infrared") for p in planets],
        optimal=2 * images + 2,
    )


def satellite_random(satellites: int, modes: int, directions: int, images: int, seed: int) -> Task:
    """One to three instruments per satellite, each supporting one or two random modes
    and calibrated on a random star; images of random (direction, mode) pairs that some
    instrument supports."""
    rng = random.Random(f"satellite-{satellites}-{modes}-{directions}-{images}-{seed}")
    mode_names = [f"mode{i}" for i in range(modes)]
    stars = [f"star{i}" for i in range(max(2, directions // 3))]
    planets = [f"planet{i}" for i in range(directions - len(stars))]
    all_dirs = stars + planets
    instruments: list[tuple[str, str, list[str], str]] = []
    pointing: list[tuple[str, str]] = []
    for s in range(satellites):
        sat = f"sat{s}"
        pointing.append((sat, rng.choice(all_dirs)))
        for _ in range(rng.randint(1, 3)):
            supported = sorted(rng.sample(mode_names, rng.randint(1, min(2, modes))))
            instruments.append((f"instr{len(instruments)}", sat, supported, rng.choice(stars)))
    usable = sorted({m for _, _, ms, _ in instruments for m in ms})
    pairs = sorted({(d, m) for d in planets for m in usable})
    chosen = sorted(rng.sample(pairs, min(images, len(pairs))))
    return _satellite(
        f"satellite-{satellites}-{len(chosen)}-s{seed}",
        instruments=instruments,
        pointing=pointing,
        modes=mode_names,
        directions=all_dirs,
        images=chosen,
    )


# -- the suite -----------------------------------------------------------------------------


@cache
def suite() -> tuple[Task, ...]:
    """The generated tasks, about as many and as large as a small benchmark suite:
    for each domain some built to a known optimum and some random ones, small to
    large. Random depot problems are often hard for greedy search; the seeds of the
    two largest were picked so the default configuration needs a few hundred
    expansions."""
    return (
        blocks_reversal(4),
        blocks_reversal(6),
        blocks_random(4, 1),
        blocks_random(5, 2),
        blocks_random(7, 3),
        blocks_random(9, 4),
        blocks_random(12, 5),
        blocks_random(17, 6),
        gripper(2),
        gripper(4),
        gripper(5),
        gripper(6),
        gripper(10),
        gripper(18),
        gripper(30),
        gripper(42),
        logistics_local(2),
        logistics_relay(1),
        logistics_relay(2),
        logistics_random(2, 2, 3, 1, 1),
        logistics_random(3, 3, 5, 1, 2),
        logistics_random(4, 3, 8, 2, 3),
        logistics_random(5, 4, 10, 2, 4),
        miconic_upward(2),
        miconic_upward(5),
        miconic_random(2, 4, 1),
        miconic_random(4, 8, 2),
        miconic_random(8, 16, 3),
        miconic_random(16, 32, 4),
        miconic_random(30, 60, 5),
        depot_shipment(2),
        depot_shipment(3),
        depot_random(1, 1, 1, 2, 1),
        depot_random(1, 2, 2, 3, 2),
        depot_random(1, 2, 2, 4, 3),
        depot_random(2, 2, 2, 6, 1),
        depot_random(2, 3, 3, 8, 7),
        satellite_tour(3),
        satellite_tour(6),
        satellite_random(1, 2, 5, 2, 1),
        satellite_random(2, 3, 7, 4, 2),
        satellite_random(3, 3, 10, 6, 3),
        satellite_random(4, 4, 15, 10, 4),
        satellite_random(6, 5, 25, 16, 5),
    )


def task(domain_name: str, name: str) -> Task:
    """The suite's task ``name`` (with or without ``.pddl``) of ``domain_name``."""
    wanted = name if name.endswith(".pddl") else f"{name}.pddl"
    for t in suite():
        if t.domain == domain_name and t.name == wanted:
            return t
    raise KeyError(f"{domain_name}/{wanted}")


@cache
def domain(name: str) -> Domain:
    """The parsed domain ``name`` (cached: a Domain is immutable)."""
    from plansmith.formats._pddl import parse_pddl_domain

    return parse_pddl_domain(DOMAINS[name], f"{name}/domain.pddl")


def load(t: Task) -> Problem:
    """The parsed problem of ``t`` (its source names the file it would be written to)."""
    from plansmith.formats._pddl import parse_pddl_problem

    return parse_pddl_problem(t.text, domain(t.domain), t.id)


def write(t: Task, folder: Path) -> tuple[Path, Path]:
    """Write ``t``'s domain and problem under ``folder/<domain>/``; return both paths."""
    where = folder / t.domain
    where.mkdir(parents=True, exist_ok=True)
    domain_file, problem_file = where / "domain.pddl", where / t.name
    domain_file.write_text(DOMAINS[t.domain])
    problem_file.write_text(t.text)
    return domain_file, problem_file
