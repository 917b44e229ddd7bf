"""One home per vendor: a vendor's key variable, base URL, auth header, SDK release, abort
statuses and list prices are declared in its package's identity (collectors/vendors/<vendor>/
__init__.py) and nowhere else; its capability modules (search.py, answer.py, research.py,
extract.py beside it) import them. Read from the source (ast), so a re-declaration is caught
before it drifts."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import collectors.vendors
from collectors.products.identity import Auth, Sdk

REPO = Path(__file__).resolve().parents[2]
CAPABILITIES = ("search.py", "answer.py", "research.py", "extract.py")
IDENTITY_NAMES = {"PROVIDER", "KEY_ENV", "KEY_ENVS", "BASE_URL", "AUTH", "AUTH_HEADER", "SDK"}
IDENTITY_NAMES |= {"ABORT_STATUSES"}
AUTH_HEADERS = {h.lower() for h in ("Authorization", "x-api-key", "X-Subscription-Token")}
AUTH_HEADERS |= {"x-goog-api-key"}
FAMILIES = ("collectors.search", "collectors.draco", "collectors.extraction", "collectors.qa")

VENDORS = sorted(
    info.name for info in pkgutil.iter_modules(collectors.vendors.__path__) if info.ispkg
)
ADAPTERS = sorted(
    str(path.relative_to(REPO))
    for vendor in VENDORS
    for path in sorted((REPO / "collectors/vendors" / vendor).glob("*.py"))
    if path.name != "__init__.py"
)
# The family registries that collect the capability modules write no identity either. Not
# checked: the offline research lane (its demo prices are no vendor's) and the research driver.
NOT_ADAPTERS = {"collectors/draco/systems/local_rag.py", "collectors/draco/systems/driver.py"}
REGISTRIES = sorted(
    str(path.relative_to(REPO))
    for family in ("collectors/search", "collectors/draco/systems")
    for path in (REPO / family).glob("*.py")
    if str(path.relative_to(REPO)) not in NOT_ADAPTERS
)


def literal(node: ast.AST) -> bool:
    """A number, string or tuple/dict of them: a value written down, not read from elsewhere."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Tuple | ast.List):
        return all(literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(literal(v) for v in node.values)
    return isinstance(node, ast.BinOp) and literal(node.left) and literal(node.right)


def redeclarations(source: str) -> list[str]:
    found = []
    tree = ast.parse(source)
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        for target in targets:
            if not isinstance(target, ast.Name) or not literal(node.value):
                continue
            name = target.id
            if name in IDENTITY_NAMES or "PRICE_USD" in name or name.endswith("_USD_PER_1K"):
                found.append(f"line {node.lineno}: {name} written here")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "SdkCheck":
            found.append(f"line {node.lineno}: SdkCheck(...) (use the vendor's SDK.check)")
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.lower() in AUTH_HEADERS
        ):
            found.append(f"line {node.lineno}: auth header {node.value!r} spelled here")
    return found


@pytest.mark.parametrize("path", ADAPTERS + REGISTRIES)
def test_a_capability_or_registry_declares_no_vendor_identity_or_price(path):
    problems = redeclarations((REPO / path).read_text(encoding="utf-8"))
    assert not problems, f"{path}: declare these in its package's __init__.py: {problems}"


def test_the_check_catches_a_redeclared_key_header_and_price():
    source = (
        'KEY_ENV = "EXA_API_KEY"\n'
        "PRICE_USD_PER_1K = {'basic': 5.0}\n"
        "HEADERS = {'x-api-key': key}\n"
        "SDK_CHECK = SdkCheck(package='exa-py', version='1', docs='https://x', checked_on='2026')\n"
        "from collectors.vendors.exa import SEARCH_USD_PER_1K as PRICE_USD_PER_1K\n"
    )
    assert len(redeclarations(source)) == 4


def test_every_vendor_module_is_a_capability_of_its_package():
    for path in ADAPTERS:
        assert Path(path).name in CAPABILITIES, f"{path}: not one of {CAPABILITIES}"


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_vendor_package_declares_its_identity_and_imports_no_family(vendor):
    module = importlib.import_module(f"collectors.vendors.{vendor}")
    assert vendor == module.PROVIDER  # the package is named by the provider id
    assert module.KEY_ENV.endswith("_API_KEY") and module.BASE_URL.startswith("https://")
    assert isinstance(module.AUTH, Auth)
    assert isinstance(getattr(module, "SDK", None), Sdk) or vendor == "brave"  # Brave: no SDK
    imported = {
        node.module
        for path in Path(module.__file__).parent.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert not {m for m in imported if m.startswith(FAMILIES)}, imported


def test_every_capability_speaks_for_its_own_vendor_with_its_sdk_release():
    for path in ADAPTERS:
        name = path.removesuffix(".py").replace("/", ".")
        module = importlib.import_module(name)
        vendor = importlib.import_module(name.rsplit(".", 1)[0])
        provider = getattr(module, "PROVIDER", vendor.PROVIDER)
        assert provider == vendor.PROVIDER, name
        if hasattr(module, "KEY_ENV"):
            assert (module.KEY_ENV, module.BASE_URL) == (vendor.KEY_ENV, vendor.BASE_URL), name
        check = getattr(module, "SDK_CHECK", None)
        if check is not None:
            assert (check.package, check.version, check.checked_on) == (
                vendor.SDK.package,
                vendor.SDK.version,
                vendor.SDK.checked_on,
            ), name
