#!/usr/bin/env python3
"""Validates every example in examples/ against its schema: a family's schema in events/,
or one named by its folder, e.g. "forward/changes" for forward/changes.schema.json.

Usage: python3 schemas/check_examples.py   (needs the `jsonschema` package: Debian 12's
python3-jsonschema 4.10 works, as do 4.18+ with `referencing`)
Exit status 0 when every example validates and every example is covered by the map.

       python3 schemas/check_examples.py --schema forward/changes FILE...
validates those files instead (the tests check what healthhook really sent with it).
Changes bodies are also held to the "Fields today" list of forward/changes' record_row:
each listed table's row must have exactly those fields, in that order.
"""
import json
import pathlib
import sys

from jsonschema import Draft202012Validator

try:  # jsonschema 4.18+
    from referencing import Registry, Resource
except ImportError:  # Debian 12 ships 4.10: $ref resolution through RefResolver
    Registry = None
    from jsonschema import RefResolver

HERE = pathlib.Path(__file__).resolve().parent

# The folders of schemas/ that hold *.schema.json files; every schema in them is checked
# against the metaschema and can be $ref'd by its $id.
SCHEMA_DIRS = ("events", "forward")

# example file → schema: "<name>" is events/<name>.schema.json (the incoming payloads),
# "<folder>/<name>" is <folder>/<name>.schema.json (e.g. "forward/changes": what
# healthhook pushes to a [[forward]] destination in changes mode).
EXAMPLES = {
    "summary-sleep.json": "summary",
    "summary-activity.json": "summary",
    "summary-activity-old-source.json": "summary",
    "summary-workouts.json": "summary",
    "summary-body.json": "summary",
    "summary-meal.json": "summary",
    "summary-profile.json": "summary",
    "summary-sleep-cycle.json": "summary",
    "summary-menstrual-cycle.json": "summary",
    "summary-electrocardiogram.json": "summary",
    "timeseries-heartrate.json": "timeseries",
    "timeseries-steps.json": "timeseries",
    "timeseries-steps-old-source.json": "timeseries",
    "timeseries-steps-old-envelope.json": "timeseries",
    "timeseries-glucose.json": "timeseries",
    "timeseries-blood-pressure.json": "timeseries",
    "timeseries-cholesterol.json": "timeseries",
    "timeseries-extra-fields.json": "timeseries",
    "workout-stream.json": "workout_stream",
    "historical-backfill.json": "backfill",
    "historical-backfill-without-is-final.json": "backfill",
    "connection-created.json": "connection",
    "connection-created-old-source.json": "connection",
    "connection-error.json": "connection",
    "device.json": "device",
    "lab-order.json": "lab_order",
    "lab-appointment.json": "lab_appointment",
    "lab-result-critical.json": "lab_result",
    "lab-parsing-job-completed.json": "lab_parsing_job",
    "hypnogram.json": "hypnogram",
    "unknown-event.json": "other",
    "new-resource-unknown-shape.json": "other",
    "continuous-query.json": "other",
    "ping.json": "other",
    "fetched-stream.context.json": "fetch_context",
    "fetched-stream.body.json": "fetched_stream",
    "fetched-summaries-page.context.json": "fetch_context",
    "fetched-summaries-page.body.json": "fetched_summaries_page",
    "fetched-timeseries-page.context.json": "fetch_context",
    "fetched-timeseries-page.body.json": "fetched_timeseries_page",
    "fetched-workouts-page.context.json": "fetch_context",
    "fetched-workouts-page.body.json": "fetched_summaries_page",
    "fetched-meals-page.context.json": "fetch_context",
    "fetched-meals-page.body.json": "fetched_summaries_page",
    "fetched-profile.context.json": "fetch_context",
    "fetched-profile.body.json": "fetched_summary_object",
    "fetched-providers.context.json": "fetch_context",
    "fetched-providers.body.json": "fetched_providers",
    "forward-changes-summary.json": "forward/changes",
    "forward-changes-samples.json": "forward/changes",
    "forward-changes-batch.json": "forward/changes",
}


def schema_key(name: str) -> str:
    """The map's schema name as a path under schemas/ without .schema.json."""
    return name if "/" in name else f"events/{name}"


def listed_row_fields(changes_schema) -> dict:
    """The "Fields today" of forward/changes' record_row description: table → its row's
    fields in order. The schema leaves rows open (they may gain fields), so this list is
    what says which fields a backend gets; field_problems() holds rows to it."""
    text = changes_schema["$defs"]["record_row"]["description"]
    listed = text[text.index("Fields today \u2014 ") + len("Fields today \u2014 "):].rstrip(".")
    fields = {}
    for entry in listed.split("; "):
        table, names = entry.split(": ", 1)
        fields[table.strip()] = names.split(", ")
    return fields


def field_problems(label, instance, listed) -> list:
    """A changes body's rows whose fields are not the listed ones, in their order."""
    problems = []
    for i, change in enumerate(instance.get("changes", []) if isinstance(instance, dict) else []):
        row, table = change.get("row"), change.get("table")
        if isinstance(row, dict) and table in listed and list(row) != listed[table]:
            problems.append(f"{label}: changes/{i}/row ({table}): fields {', '.join(row)}; "
                            f"the schema's Fields today lists {', '.join(listed[table])}")
    return problems


def main(argv) -> int:
    schemas = {}
    by_id = {}
    for folder in SCHEMA_DIRS:
        for path in sorted((HERE / folder).glob("*.schema.json")):
            schema = json.loads(path.read_text())
            Draft202012Validator.check_schema(schema)
            schemas[f"{folder}/{path.name.removesuffix('.schema.json')}"] = schema
            by_id[schema["$id"]] = schema

    def validator_for(schema):
        if Registry is not None:
            registry = Registry().with_resources((i, Resource.from_contents(s)) for i, s in by_id.items())
            return Draft202012Validator(schema, registry=registry)
        return Draft202012Validator(schema, resolver=RefResolver.from_schema(schema, store=by_id))

    if len(argv) >= 3 and argv[0] == "--schema":
        name, files = argv[1], argv[2:]
        if name not in schemas:
            print(f"check_examples.py: no schema {name}.schema.json")
            return 2
        validator = validator_for(schemas[name])
        failures = 0
        for file in files:
            instance = json.loads(pathlib.Path(file).read_text())
            for error in sorted(validator.iter_errors(instance), key=lambda e: list(e.path)):
                print(f"{file} ({name}): {'/'.join(map(str, error.path))}: {error.message}")
                failures += 1
            if name == "forward/changes":
                for problem in field_problems(file, instance, listed_row_fields(schemas[name])):
                    print(problem)
                    failures += 1
        print(f"{len(files)} files, {failures} problems")
        return 1 if failures else 0

    failures = 0
    present = {p.name for p in (HERE / "examples").glob("*.json")}
    for name in sorted(present - EXAMPLES.keys()):
        print(f"{name}: no schema assigned in check_examples.py")
        failures += 1
    for name in sorted(set(EXAMPLES.values())):
        if schema_key(name) not in schemas:
            print(f"check_examples.py: no schema {schema_key(name)}.schema.json for {name!r}")
            failures += 1
    for name, family in EXAMPLES.items():
        if schema_key(family) not in schemas:
            continue
        instance = json.loads((HERE / "examples" / name).read_text())
        validator = validator_for(schemas[schema_key(family)])
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
        for error in errors:
            print(f"{name} ({family}): {'/'.join(map(str, error.path))}: {error.message}")
        failures += len(errors)
        if family == "forward/changes":
            for problem in field_problems(name, instance, listed_row_fields(schemas[family])):
                print(problem)
                failures += 1
    print(f"{len(EXAMPLES)} examples, {len(schemas)} schemas, {failures} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
