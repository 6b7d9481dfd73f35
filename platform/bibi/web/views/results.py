"""Results pages: the leaderboards, the breaker × builder heat map, the item explorer, the
λmax evidence and the downloads (the organizers' scoring page is ``scoring.py``).

Who sees what is the evaluation app's rule (``bibi.evaluation.selectors``): every snapshot
to the organizers, the published ones (the latest is the leaderboard) to everyone who can
see the task, the item table only once the results phase has started, and an anonymous
team's alias to everyone outside it. ``?snapshot=ID`` shows another snapshot than the
leaderboard (organizers: any, before publication too).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import SafeString

from bibi.evaluation import exports, table_rows
from bibi.evaluation import selectors as results_selectors
from bibi.evaluation.models import Snapshot
from bibi.evaluation.selectors import Names
from bibi.sharedtasks.models import SharedTask
from bibi.sharedtasks.selectors import Viewer
from bibi.systems.selectors import SPAN_DEV_RULE
from bibi.web import charts
from bibi.web.access import task_and_viewer
from bibi.web.explorer import answer_rule, item_entries
from bibi.web.forms import ItemFilterForm, LambdaSystemForm
from bibi.web.kinds import PAGE_KINDS, page_kind
from bibi.web.sorting import Column, sort_table
from bibi.web.validation_results import leaderboard_validation

ITEMS_PER_PAGE = 20


@dataclass(frozen=True)
class RateWords:
    """How a snapshot's break percentages read: every heading, caption and chart says the
    unit its break-rate mode computed (``scoring``: ``pairs`` or ``sentences``)."""

    heading: str  # a column heading
    of_what: str  # "% of ..." in captions
    per: str  # "% broken per ..."
    explain: str  # one sentence under the settings


RATE_WORDS = {
    "pairs": RateWords(
        "Pairs broken (%)",
        "pairs",
        "pair",
        "A break rate is breaks ÷ pairs: the share of the pairs that broke the system.",
    ),
    "sentences": RateWords(
        "Broken per sentence (%)",
        "sentences",
        "sentence",
        "A break rate is breaks ÷ sentences, two sentences a pair: half the per-pair rate, "
        "as the 2017 tables printed it.",
    ),
}
# Weight modes whose weight differs per breaker team (the system's score on that team's
# originals): the builders' table shows each team's weight, not one number.
PER_TEAM_WEIGHTS = {"original_accuracy", "original_f1"}


def builder_columns(rate: RateWords, weight_mode: str, *, words: Mapping[str, str]) -> list[Column]:
    """The builders' leaderboard columns, headed in the task's ``words``
    (``bibi.web.kinds.PageKind.words``: a span task's read answer accuracy and mean token F1)."""
    weight = {
        "dev_accuracy": "Weight (dev accuracy)",
        "original_accuracy": "Weight: accuracy on each team's originals (mean)",
        "original_f1": "Weight: F1 on each team's originals (mean)",
        "none": "Weight (none: 1)",
    }.get(weight_mode, "Weight")
    return [
        Column("rank", "Rank"),
        Column("system", "System", numeric=False),
        Column("team", "Team", numeric=False),
        Column("broken_pct", rate.heading),
        Column("f1", words["f1"], high_first=True),
        Column("accuracy", words["accuracy"].capitalize(), high_first=True),
        Column("breaks", "Breaks"),
        Column("pairs", "Pairs seen", high_first=True),
        Column("unseen", "Unseen"),
        Column("dev_accuracy", "Dev accuracy", high_first=True),
        Column("weight", weight, high_first=True),
    ]


BREAKER_COLUMNS = [
    Column("rank", "Rank"),
    Column("team", "Team", numeric=False),
    Column("score", "Score", high_first=True),
    Column("pairs", "Pairs", high_first=True),
]
KINDS = {"same_label": "label kept", "flipped": "label changed", "all": "all pairs"}
_ID = re.compile(r"[0-9]{1,18}")


@dataclass(frozen=True)
class Results:
    """What every results page starts from: the task, who looks, and what they may see."""

    shared_task: SharedTask
    viewer: Viewer
    sight: results_selectors.Viewer
    snapshot: Snapshot | None
    names: Names | None
    # "snapshot=ID" when the address named one, carried by the pages' links.
    snapshot_query: str


def _results(request: HttpRequest, slug: str) -> Results:
    shared_task, viewer = task_and_viewer(request, slug)
    asked = request.GET.get("snapshot") or None
    if asked is not None and not _ID.fullmatch(asked):
        raise Http404("No such snapshot.")
    snapshot = results_selectors.results_snapshot(
        shared_task=shared_task,
        is_organizer=viewer.is_organizer,
        snapshot_id=int(asked) if asked else None,
    )
    if asked and snapshot is None:
        raise Http404("No such snapshot, or it is not published.")
    sight = results_selectors.Viewer.of_page(viewer=viewer, shared_task=shared_task)
    names = results_selectors.names_for(viewer=sight, snapshot=snapshot) if snapshot else None
    return Results(
        shared_task, viewer, sight, snapshot, names, f"snapshot={asked}" if asked else ""
    )


def _page(
    request: HttpRequest, template: str, results: Results, section: str, **context: Any
) -> HttpResponse:
    snapshot = results.snapshot
    context.update(
        shared_task=results.shared_task,
        viewer=results.viewer,
        tab="results",
        section=section,
        snapshot=snapshot,
        snapshot_query=results.snapshot_query,
        items_visible=snapshot is not None and results.sight.can_view_items(snapshot),
        settings_used=settings_used(snapshot) if snapshot else None,
    )
    return render(request, template, context)


def settings_used(snapshot: Snapshot) -> dict[str, Any]:
    """The settings a snapshot was scored with (not the task's settings today), in words."""
    used = snapshot.settings_used
    weight = used.get("weight_mode", "")
    rate = used.get("break_rate_mode", "")
    return {
        "weight_mode": weight,
        "weight": SharedTask.WeightMode(weight).label
        if weight in SharedTask.WeightMode.values
        else weight,
        "per_team_weights": weight in PER_TEAM_WEIGHTS,
        "break_rate_mode": rate,
        "break_rate": SharedTask.BreakRateMode(rate).label
        if rate in SharedTask.BreakRateMode.values
        else rate,
        "rate": RATE_WORDS.get(rate, RATE_WORDS["pairs"]),
        "labels": used.get("labels", []),
        "answer_rule": answer_rule(used),
        "dev_rule": dev_rule(snapshot),
        "max_sequence_length": used.get("max_sequence_length"),
        # Snapshots from before precisions were recorded say nothing: every cell was fp32 then.
        "precisions": ", ".join(
            f"{name} ({count} cells)" for name, count in used.get("precisions", {}).items()
        ),
    }


def dev_rule(snapshot: Snapshot) -> str:
    """How the snapshot's span dev figures were counted, in words: only for snapshots whose
    builder rows record the answer mode of their dev figures (scored under the one counting
    rule, ``bibi.systems.selectors.SPAN_DEV_RULE``); '' otherwise."""
    rows = (snapshot.tables or {}).get("builders", [])
    modes = sorted({row["dev_answer_mode"] for row in rows if row.get("dev_answer_mode")})
    if not modes:
        return ""
    return f"{SPAN_DEV_RULE[0].upper()}{SPAN_DEV_RULE[1:]}, under {', '.join(modes)}."


def _applied_weights(
    builders: list[dict[str, Any]], breakers: list[dict[str, Any]], weight_mode: str
) -> list[dict[str, Any]]:
    """Builder rows whose ``weight`` is the weight the breaker scores applied: the stored
    row keeps the dev-accuracy weight whatever the mode, so under a per-team mode the row
    gets each breaker team's weight (``team_weights``) and their mean, and under ``none`` 1."""
    if weight_mode == "none":
        return [{**row, "weight": 1.0} for row in builders]
    if weight_mode not in PER_TEAM_WEIGHTS:
        return builders
    rows = []
    for row in builders:
        team_weights = [
            {"team": breaker["team"], "weight": cell["weight"]}
            for breaker in breakers
            for cell in breaker["by_system"]
            if cell["system_id"] == row["system_id"] and cell["weight"] is not None
        ]
        mean = (
            sum(entry["weight"] for entry in team_weights) / len(team_weights)
            if team_weights
            else None
        )
        rows.append({**row, "weight": mean, "team_weights": team_weights})
    return rows


def leaderboards(request: HttpRequest, slug: str) -> HttpResponse:
    results = _results(request, slug)
    snapshot, names = results.snapshot, results.names
    context: dict[str, Any] = {}
    if snapshot is not None and names is not None:
        used = settings_used(snapshot)
        breakers = exports.TABLES["breakers"].as_json(snapshot, names)
        builders = _applied_weights(
            exports.TABLES["builders"].as_json(snapshot, names), breakers, used["weight_mode"]
        )
        context.update(
            builders=sort_table(
                builders,
                builder_columns(
                    used["rate"],
                    used["weight_mode"],
                    words=PAGE_KINDS.of(table_rows.snapshot_kind(snapshot)).words,
                ),
                request.GET,
                "builders",
            ),
            breakers=sort_table(breakers, BREAKER_COLUMNS, request.GET, "breakers"),
            excluded=exports.snapshot_summary(snapshot, names)["excluded_systems"],
            validation=leaderboard_validation(snapshot, names),
            downloads=[
                table
                for table in exports.TABLES.values()
                if table.visible_to(results.sight, snapshot)
            ],
        )
    return _page(request, "web/results/leaderboards.html", results, "leaderboards", **context)


def matrix(request: HttpRequest, slug: str) -> HttpResponse:
    results = _results(request, slug)
    context: dict[str, Any] = {}
    if results.snapshot is not None and results.names is not None:
        table = exports.TABLES["matrix"].as_json(results.snapshot, results.names)
        context["matrix"] = {
            "systems": table["systems"],
            "rows": [
                {"team": team["team"], "values": values}
                for team, values in zip(table["teams"], table["broken_pct"], strict=True)
            ],
        }
        context["tags"] = results.snapshot.tables.get("tags", [])
        context["flips"] = [
            {**row, "kind": KINDS.get(row["kind"], row["kind"])}
            for row in results.snapshot.tables.get("flips", [])
        ]
    return _page(request, "web/results/matrix.html", results, "matrix", **context)


def items(request: HttpRequest, slug: str) -> HttpResponse:
    results = _results(request, slug)
    snapshot, names = results.snapshot, results.names
    context: dict[str, Any] = {}
    if snapshot is not None and names is not None and results.sight.can_view_items(snapshot):
        tables = snapshot.tables
        form = ItemFilterForm(
            request.GET,
            teams=[(team, names.team(team)) for team in tables["matrix"]["team_ids"]],
            systems=[
                (entry["system_id"], names.system(entry["system_id"])) for entry in snapshot.systems
            ],
            tags=[row["tag"] for row in tables.get("tags", [])],
            labelled=results.shared_task.kind.labelled,
        )
        form.is_valid()
        chosen = form.item_filter()
        queryset = results_selectors.snapshot_items_filtered(snapshot=snapshot, filters=chosen)
        page = Paginator(queryset, ITEMS_PER_PAGE).get_page(request.GET.get("page"))
        entries = item_entries(
            page.object_list,
            kind=results.shared_task.kind,
            tables=tables,
            names=names,
            shown=[chosen.system_id] if chosen.system_id else tables["item_systems"],
            marks=page_kind(results.shared_task).explorer_marks,
        )
        query = request.GET.copy()
        query.pop("page", None)
        context.update(form=form, page=page, entries=entries, query=query.urlencode())
    return _page(request, "web/results/items.html", results, "items", **context)


def _quartile_chart(
    evidence: results_selectors.LambdaEvidence, value: str, title: str, y_label: str
) -> SafeString | str:
    """Percentages by quartile of the original's λmax, one line per kind of pair."""
    series = []
    for kind, name in KINDS.items():
        by_quartile = {
            row["quartile"]: row[value] for row in evidence.quartiles if row["kind"] == kind
        }
        values = [by_quartile.get(q) for q in (1, 2, 3, 4)]
        if any(value is not None for value in values):
            series.append(charts.Series(name, values))
    if not series:
        # Nothing to draw: the table beside it says why (no pair in any quartile).
        return ""
    return charts.line_chart(
        title=title,
        categories=["Q1", "Q2", "Q3", "Q4"],
        series=series,
        y_label=y_label,
        x_label="quartile of the original's λmax (Q1 lowest)",
    )


def lambda_plots(request: HttpRequest, slug: str) -> HttpResponse:
    results = _results(request, slug)
    snapshot, names = results.snapshot, results.names
    context: dict[str, Any] = {}
    systems = results_selectors.lambda_systems(snapshot=snapshot) if snapshot else []
    if snapshot is not None and names is not None and systems:
        used = settings_used(snapshot)
        form = LambdaSystemForm(
            request.GET if "system" in request.GET else None,
            systems=[(system_id, names.system(system_id)) for system_id in systems],
            initial={"system": systems[0]},
        )
        system_id = form.cleaned_data["system"] if form.is_valid() else systems[0]
        evidence = results_selectors.lambda_evidence(snapshot=snapshot, system_id=system_id)
        system = names.system(system_id)
        delta = [{**row, "team": names.team(row["team_id"])} for row in evidence.delta]
        context.update(
            form=form,
            system=system,
            evidence=evidence,
            kinds=KINDS,
            delta=delta,
            changed_chart=_quartile_chart(
                evidence,
                "changed_pct",
                f"Prediction changed, by the original's λmax: {system}",
                "% of pairs, prediction changed",
            ),
            broken_chart=_quartile_chart(
                evidence,
                "broken_pct",
                f"Broken, by the original's λmax: {system}",
                f"% broken (of {used['rate'].of_what})",
            ),
            delta_chart=charts.bar_chart(
                title=f"Mean Δλmax (variant − original) per breaker team: {system}",
                labels=[row["team"] for row in delta],
                values=[row["mean_delta"] for row in delta],
                x_label="mean Δλmax",
            ),
        )
    context["systems"] = systems
    if snapshot is not None and names is not None:
        # Systems scored without λmax: self-reported ones (predictions only, no model to
        # compute it with) and hosted ones whose λmax is missing on every original.
        context["without_lambda"] = [
            {"system": names.system(entry["system_id"]), "kind": entry.get("kind", "")}
            for entry in snapshot.systems
            if entry["system_id"] not in systems
        ]
    return _page(request, "web/results/lambda.html", results, "lambda", **context)


def download(request: HttpRequest, slug: str, table: str, fmt: str) -> HttpResponse:
    """One table as CSV or JSON, or (``table`` "results", ``fmt`` "zip") every table the
    visitor may read with a README: the evaluation app's exports, as the API serves them."""
    results = _results(request, slug)
    snapshot, names = results.snapshot, results.names
    if snapshot is None or names is None:
        raise Http404("No results have been published for this shared task yet.")
    base = f"{snapshot.shared_task.slug}-results-{snapshot.id}"
    if fmt == "zip":
        if table != "results":
            raise Http404("The zip of every table is results.zip.")
        body: bytes | str = exports.snapshot_zip(snapshot, results.sight, names)
        content_type, filename = "application/zip", f"{base}.zip"
    else:
        spec = exports.TABLES.get(table)
        if spec is None or not spec.visible_to(results.sight, snapshot):
            raise Http404("No such table, or not yet visible.")
        filename = f"{base}-{table}.{fmt}"
        if fmt == "csv":
            body, content_type = spec.as_csv(snapshot, names), "text/csv; charset=utf-8"
        else:
            rows = (
                [
                    table_rows.item_json(
                        item, names, snapshot.tables["vocabulary"], snapshot.tables["item_systems"]
                    )
                    for item in results_selectors.snapshot_items(snapshot=snapshot)
                ]
                if table == "items"
                else spec.as_json(snapshot, names)
            )
            body = json.dumps({"table": table, "rows": rows}, ensure_ascii=False)
            content_type = "application/json"
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
