"""The rules of the contract, one package per area (mirroring app/api/).

Each area package's `__init__` is its face: the use cases other areas and the API may
call. An area's modules are its own business; `shared/` holds what several areas use.
`make lint` enforces this with import-linter (pyproject.toml, [tool.importlinter]).
"""
