"""The archive format of each deal protocol as a JSON Schema (``engine/schemas/``).

One file per protocol version (``pbem-deal-1.schema.json`` … ``-3``); `pbem verify`
validates with the ``jsonschema`` library, the standalone ``docs/pbem_deal_verify.py``
and the replay page with their own small validators of the same file (the keywords the
files use: ``type``, ``const``, ``enum``, ``pattern``, ``minLength``, ``maxLength``,
``minimum``, ``maximum``, ``minItems``, ``maxItems``, ``items``, ``properties``,
``required``, ``additionalProperties``, ``anyOf``, ``$ref``). Integers are strict: a
boolean is not an integer, nor is ``2.0``.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

SCHEMA_FILES = {f"pbem-deal/{n}": f"pbem-deal-{n}.schema.json" for n in (1, 2, 3)}


@cache
def schema(protocol: str) -> dict[str, Any]:
    """The schema of ``protocol``'s archives; KeyError for another protocol."""
    text = files("engine").joinpath("schemas", SCHEMA_FILES[protocol]).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def _validator(protocol: str) -> Any:
    import jsonschema

    def strict_int(_: Any, value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine("integer", strict_int)
    strict = jsonschema.validators.extend(base, type_checker=checker)
    return strict(schema(protocol))


def schema_error(archive: Any, protocol: str) -> str | None:
    """Where ``archive`` breaks the schema of ``protocol`` (the first error, by its
    path: ``deal_proof.entropy.0.seat: True is not of type 'integer'``), or None."""
    validator = _validator(protocol)
    errors = sorted(validator.iter_errors(archive), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return None
    error = errors[0]
    where = ".".join(str(p) for p in error.absolute_path) or "the archive"
    return f"{where}: {error.message}"
