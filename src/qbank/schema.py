"""JSON Schemas for the YAML content files, generated from the pydantic models."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from .model import SCHEMA_MODELS
from .practice.model import PRACTICE_SCHEMAS


def schemas() -> dict[str, dict[str, object]]:
    """File name -> JSON Schema for every YAML file kind."""
    out: dict[str, dict[str, object]] = {}
    models: dict[str, type[BaseModel]] = {**SCHEMA_MODELS, **PRACTICE_SCHEMAS}
    for name, model in models.items():
        schema = model.model_json_schema()
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$id"] = f"{name}.schema.json"
        out[f"{name}.schema.json"] = schema
    return out


def write_schemas(folder: Path) -> list[Path]:
    """Write every schema into ``folder``; returns the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in schemas().items():
        path = folder / name
        path.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written
