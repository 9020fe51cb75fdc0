"""The citation registry: cite(), @cites, coverage() and the link to the spec files."""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import warnings
from pathlib import Path

import pytest

import grokclocks
from grokclocks import DomainError, citations
from grokclocks.citations import PAPERS, SPEC, cite, citations_of, cites, coverage, spec_ids

SPEC_DIR = Path(__file__).resolve().parents[2] / "shared" / "spec"
CORE_MODULES = ("grokclocks.rmt", "grokclocks.linear")

# spec status tag (as written in shared/spec/*.md headings) -> status stored in SPEC
TAGS = {"V": "exact", "V-corr": "exact (corrected)", "A": "asymptotic", "P": "paper claim", "E": "empirical"}


@pytest.fixture
def private_registry(monkeypatch):
    """Decorate throw-away functions without adding them to the global coverage registry."""
    monkeypatch.setattr(citations, "_REGISTRY", {})
    return citations._REGISTRY


# ---------------------------------------------------------------- cites() and cite() on a local function


def test_cites_records_ids_registry_and_docstring(private_registry):
    @cites("levi:eq19", "levi:gen-closed")
    def f(x):
        """Example.

        More text.
        """
        return x

    assert f.__cites__ == ("levi:eq19", "levi:gen-closed")
    assert citations_of(f) == ("levi:eq19", "levi:gen-closed")
    name = f"{f.__module__}.{f.__qualname__}"
    assert private_registry["levi:eq19"] == [name]
    assert private_registry["levi:gen-closed"] == [name]
    # the docstring names the IDs and their statuses
    assert "Spec IDs" in f.__doc__
    assert "`levi:eq19` (exact), `levi:gen-closed` (exact)." in f.__doc__
    assert f.__doc__.startswith("Example.")


def test_spec_ids_section_fits_80_columns():
    """`help()` indents a docstring by 4: the Spec IDs section wraps at 76 columns, no ID split over two lines."""
    from grokclocks.compare import compare_run

    ids = citations_of(compare_run)
    assert len(ids) >= 20  # a long list (one line of 869 characters before)
    tail = compare_run.__doc__.rpartition("Spec IDs\n--------\n")[2].strip()
    lines = tail.splitlines()
    assert len(lines) > 1 and max(map(len, lines)) <= 76, lines
    flat = " ".join(lines)
    assert all(f"`{i}` ({SPEC[i].status})" in flat for i in ids) and flat.endswith(".")


def test_cites_rejects_unknown_and_empty():
    with pytest.raises(KeyError, match="levi:eq999"):
        cites("levi:eq999")
    with pytest.raises(KeyError, match="nopaper:eq1"):
        cites("nopaper:eq1")
    with pytest.raises(ValueError):
        cites()


def test_cite_local_function_bibtex_and_text(private_registry):
    @cites("levi:eq8", "levi:gen-closed")
    def g():
        """Doc."""

    bib = cite(g)
    # levi:eq8 is the paper's eq. (8); levi:gen-closed is grokclocks' own closed form (the paper states none)
    assert bib.startswith("@inproceedings{levi2024grokking,") and "\n\n@misc{grokclocks," in bib
    assert bib.count("@") == 2 and bib.count("note") == 2
    levi, own = bib.split("\n\n")
    assert "note = {Results used (grokclocks spec IDs): eq. (8), Sec. 3.1.1 [levi:eq8].}" in levi
    assert "[levi:gen-closed]" in own and "derived for grokclocks" in own and "erratum levi-9" in own
    assert levi.replace(levi.splitlines()[-2] + "\n", "").replace("arXiv},", "arXiv}") == PAPERS["levi"].bibtex
    txt = cite(g, format="text")
    assert txt.splitlines() == [PAPERS["levi"].text + " [levi:eq8 (eq. (8), Sec. 3.1.1)]",
                                citations.REFERENCES["grokclocks"].text + " [levi:gen-closed] (errata levi-9)"]


def test_cite_partial_is_resolved_to_its_function(private_registry):
    @cites("levi:eq19")
    def h(a, b):
        """Doc."""

    p = functools.partial(functools.partial(h, 1), 2)
    assert citations_of(p) == ("levi:eq19",)
    assert cite(p, format="text").endswith("[levi:eq19 (eq. (19), App. B)] (errata levi-8)")


def test_cite_spec_id_and_paper_key():
    bib = cite("levi:eq19")
    assert bib.startswith(PAPERS["levi"].bibtex[:-2]) and bib.endswith("}\n}")
    assert ("note = {Results used (grokclocks spec IDs): eq. (19), App. B [levi:eq19]. Corrected by grokclocks: "
            "erratum levi-8 (grokclocks.errata).}") in bib
    assert cite("levi:eq19", format="text") == PAPERS["levi"].text + " [levi:eq19 (eq. (19), App. B)] (errata levi-8)"
    for key, paper in PAPERS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", citations.CitationWarning)
            assert cite(key) == paper.bibtex  # a bare paper key: the entry alone, no results named
            assert cite(key, format="text") == paper.text
        assert paper.bibtex.lstrip().startswith("@") and "{" + paper.bibkey + "," in paper.bibtex


def test_cite_errors():
    with pytest.raises(KeyError, match="unknown spec ID 'levi:eq999'"):
        cite("levi:eq999")
    with pytest.raises(KeyError):
        cite("no_such_paper")
    with pytest.raises(KeyError):
        cite("grokclocks.citations.no_such_function")

    def undecorated():
        """Doc."""

    with pytest.raises(KeyError, match="no @cites"):
        cite(undecorated)
    with pytest.raises(DomainError, match="format must be one of"):
        cite("levi:eq19", format="xml")


def test_cite_resolves_names_inside_grokclocks_only_and_names_the_nearest():
    """`cite("X.y")` imported module X (`this.x` printed the Zen of Python); a name is now looked up in a fixed
    list of grokclocks modules, and a miss is a DomainError (and, as before, a KeyError) naming the nearest."""
    import sys

    for name, near in (("grok_tim", "nearest: grok_time"), ("linear.grok_tim", "nearest: linear.grok_time"),
                       ("grokclocks.linear.grok_tim", "nearest: linear.grok_time"),
                       ("levi:eq99", "nearest: levi:eq9"), ("this.x", None), ("os.system", None),
                       ("grokclocks.__main__.main", None), ("linear._crossing.grok_time", None),
                       ("linear.grok_time.__wrapped__", None)):
        with pytest.raises(DomainError) as info:
            cite(name)
        assert isinstance(info.value, KeyError) and repr(name)[1:-1] in str(info.value)
        assert near is None or near in str(info.value), str(info.value)
    assert "this" not in sys.modules and "grokclocks.__main__" not in sys.modules
    assert cite("linear.grok_time") == cite("grokclocks.linear.grok_time") == cite("grok_time")


def test_cite_is_reexported():
    assert grokclocks.cite is cite
    # grokclocks.coverage is the theory module of spec uniformity, not the registry function
    import grokclocks.coverage as coverage_module

    assert grokclocks.coverage is coverage_module and not callable(grokclocks.coverage)


# ---------------------------------------------------------------- the real library functions


def test_cite_real_function_and_its_dotted_name():
    from grokclocks.linear import grok_time

    ids = citations_of(grok_time)
    assert "levi:tstar" in ids or "levi:grok-def" in ids, ids
    bib = cite(grok_time)
    assert bib.count("@") == 1 and bib.startswith("@inproceedings{levi2024grokking,")
    assert "Sec. 3.1.3 (definition of the grokking time) [levi:grok-def]" in bib
    txt = cite(grok_time, format="text")
    assert txt.startswith(PAPERS["levi"].text) and all(i in txt for i in ids)
    # a dotted name, with or without the package prefix, resolves to the same function
    assert cite("grokclocks.linear.grok_time", format="text") == txt
    assert cite("linear.grok_time", format="text") == txt


def _public_functions(modname: str):
    mod = importlib.import_module(modname)
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in dir(mod) if not n.startswith("_")]
    for n in names:
        obj = getattr(mod, n)
        if inspect.isfunction(obj) and obj.__module__ == modname:
            yield n, obj


@pytest.mark.parametrize("modname", CORE_MODULES)
def test_every_public_function_cites_the_spec(modname):
    funcs = list(_public_functions(modname))
    assert funcs, f"{modname} exports no public function"
    missing = [n for n, f in funcs if not citations_of(f)]
    assert not missing, f"public functions of {modname} without @cites: {missing}"
    for n, f in funcs:
        doc = f.__doc__ or ""
        assert "Spec IDs" in doc and all(f"`{i}`" in doc for i in citations_of(f)), (
            f"{modname}.{n}: docstring does not name its spec IDs")


@pytest.mark.parametrize("modname", CORE_MODULES)
def test_module_all_is_accurate(modname):
    mod = importlib.import_module(modname)
    if not hasattr(mod, "__all__"):
        pytest.skip(f"{modname} defines no __all__ (public = names without a leading underscore)")
    absent = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not absent, f"{modname}.__all__ names missing objects: {absent}"


def test_coverage_every_levi_id_is_implemented():
    cov = coverage("levi")
    assert set(cov) == set(spec_ids("levi"))
    missing = sorted(i for i, fs in cov.items() if not fs)
    assert not missing, f"levi spec IDs with no implementing function: {missing}"


def test_coverage_names_resolve_to_functions_citing_the_id():
    for spec_id, names in coverage().items():
        for name in names:
            if ".<locals>." in name:  # a function defined inside a test
                continue
            mod, _, attr = name.rpartition(".")
            obj = importlib.import_module(mod)
            for part in attr.split("."):
                obj = getattr(obj, part)
            assert spec_id in citations_of(obj), f"{name} is registered for {spec_id} but does not cite it"


def test_coverage_without_import_returns_all_ids():
    cov = coverage("levi", import_all=False)
    assert list(cov) == spec_ids("levi")
    assert all(isinstance(v, list) for v in cov.values())


# ---------------------------------------------------------------- SPEC vs shared/spec/*.md


def _spec_text(key: str) -> str:
    path = SPEC_DIR / f"{key}.md"
    if not path.exists():
        pytest.skip(f"{path} not present (shared/ is not beside this checkout)")
    return path.read_text()


def test_spec_ids_match_the_levi_spec_file():
    text = _spec_text("levi")
    text = re.sub(r"levi:[\w-]*\*", "", text)  # wildcards such as `levi:conv-*`
    in_file = set(re.findall(r"levi:[a-z0-9][\w.-]*\w", text))
    registered = set(spec_ids("levi"))
    assert in_file - registered == set(), f"IDs in levi.md but not in SPEC: {sorted(in_file - registered)}"
    assert registered - in_file == set(), f"IDs in SPEC but not in levi.md: {sorted(registered - in_file)}"


def test_spec_statuses_match_the_levi_spec_headings():
    text = _spec_text("levi")
    checked = 0
    for heading in re.findall(r"^### (.*)$", text, re.M):
        tag = re.search(r"\*\*\[([A-Za-z-]+)\]", heading)
        if not tag:
            continue
        for spec_id in re.findall(r"`(levi:[\w-]+)`", heading):
            assert SPEC[spec_id].status == TAGS[tag.group(1)], (spec_id, heading)
            checked += 1
    assert checked >= 40


def test_every_spec_entry_has_a_known_paper_and_status():
    statuses = set(TAGS.values()) | {"convention", "reproduction"}
    for spec_id, entry in SPEC.items():
        assert entry.id == spec_id
        assert entry.paper is PAPERS[spec_id.split(":")[0]]
        assert entry.status in statuses
        assert entry.title


# ---------------------------------------------------------------- several targets, bare names, missing fields


def test_cite_many_deduplicates_papers_and_collects_ids():
    from grokclocks.citations import cite_many

    bib = cite_many(["levi:eq11", "grokclocks.linear.grok_time", "levi:eq19"])
    assert bib.count("@") == 1 and bib.count("note") == 1  # one paper, one note naming every result used
    assert "eq. (11), Sec. 3.1.3 [levi:eq11]; Sec. 3.1.3 (definition" in bib and "[levi:eq19]." in bib
    assert "erratum levi-14" not in bib and "errata levi-14, levi-8" in bib
    with pytest.warns(citations.CitationWarning, match="'clocks'"):
        txt = cite_many(["levi:eq11", "clocks:appB", "levi:eq19"], format="text")
    assert txt.splitlines() == [
        PAPERS["levi"].text + " [levi:eq11 (eq. (11), Sec. 3.1.3), levi:eq19 (eq. (19), App. B)] (errata levi-14, levi-8)",
        PAPERS["clocks"].text + " [clocks:appB (App. B (experimental settings))]"]
    with pytest.raises(KeyError, match="no_such_thing"):
        cite_many(["levi:eq11", "no_such_thing"])


def test_bare_function_names_resolve():
    from grokclocks.rmt import mp_edges

    assert cite("mp_edges", format="text") == cite(mp_edges, format="text")
    with pytest.raises(KeyError, match="neither a spec ID"):
        cite("definitely_not_a_function")


def test_compare_run_cites_what_it_computes():
    from grokclocks.compare import compare_run

    ids = citations_of(compare_run)
    assert {"clocks:appB", "kramers:eq15", "uniformity:thm3.10", "repulsion:headline", "levi:grok-def"} <= set(ids)
    with pytest.warns(citations.CitationWarning):
        bib = cite(compare_run)
    assert bib.count("@") == 6  # the five papers and grokclocks (kramers:milestones is its own definition)
    assert bib.count("note") == 6 and "[kramers:milestones]" in bib.split("@misc{grokclocks,")[1]


def test_incomplete_entry_says_so_and_warns():
    k = PAPERS["kramers"]
    assert k.missing == ("author", "venue", "eprint")
    assert "author = {{Anonymous / not stated in the source}}" in k.bibtex and "INCOMPLETE CITATION" in k.bibtex
    with pytest.warns(citations.CitationWarning, match="no author, venue, eprint") as rec:
        bib = cite("kramers:arrhenius")
    assert rec[0].filename == __file__  # the warning points at the caller of cite
    # one note: the incomplete-entry notice, then the result used
    assert bib.count("note") == 1 and "before use. Results used (grokclocks spec IDs): Sec. 4.2" in bib
    for key, paper in PAPERS.items():  # every other entry names its authors
        if not paper.missing:
            assert "author" in paper.bibtex and "Anonymous" not in paper.bibtex, key


# what each source text states (the seeds grokclocks was built from): authors only in Levi et al.; an arXiv
# identifier only in the repulsion paper.  Authors and identifiers beyond that come from a checked public
# listing (`Paper.provenance`) or the entry is flagged incomplete.
STATED = {"levi": {"author"}, "clocks": set(), "kramers": set(), "uniformity": set(), "repulsion": {"eprint"}}


@pytest.mark.parametrize("key", list(PAPERS))
def test_every_entry_states_where_its_fields_come_from(key):
    paper = PAPERS[key]
    assert paper.provenance
    checked = "checked against" in paper.provenance
    for field in ("author", "eprint"):
        if field not in STATED[key] and not checked:
            assert field in paper.missing, f"{key}: {field} is neither in the source nor checked: flag it"
    if "author" in paper.missing:
        assert "{{Anonymous / not stated in the source}}" in paper.bibtex and "INCOMPLETE CITATION" in paper.bibtex
        assert paper.text.startswith("[author")
        with pytest.warns(citations.CitationWarning, match=repr(key)):
            cite(key)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error", citations.CitationWarning)
            cite(key)
    fields = "\n".join(line for line in paper.bibtex.splitlines() if not re.match(r"\s*note\s*=", line))
    assert ("eprint" in paper.missing) == (re.search(r"\d{4}\.\d{5}", fields) is None), key


def test_repulsion_and_clocks_no_longer_name_unchecked_authors():
    assert "author = {Xu}" not in PAPERS["repulsion"].bibtex and PAPERS["repulsion"].missing == ("author",)
    assert "2605.08119" in PAPERS["repulsion"].bibtex  # stated in the source (arXiv:2605.08119v1)
    clocks = PAPERS["clocks"]
    assert clocks.missing == ("author", "venue", "eprint") and "Tan, H." not in clocks.bibtex
    assert "could not be checked" in clocks.bibtex  # the attribution found elsewhere is named, as unchecked


# ---------------------------------------------------------------- citations to the equation


def test_every_spec_id_has_a_place_in_its_paper_or_another_source():
    """Each registered result is either the paper's, with its place (equation, theorem, section, figure,
    table, appendix), or rests on a textbook of REFERENCES or on grokclocks itself, saying what it is."""
    place = re.compile(r"\b(eqs?\.|Sec\.|Theorem|Lemma|Proposition|Corollary|Definition|Assumption|Fig\.|Table|"
                       r"App\.|abstract)")
    for spec_id, e in SPEC.items():
        if e.basis == "paper":
            assert place.search(e.where) and not e.note, (spec_id, e.where)
            assert e.source is e.paper
        else:
            assert not e.where and e.note, spec_id
            assert e.basis == "own" or e.basis in citations.REFERENCES, (spec_id, e.basis)
            assert e.source is citations.REFERENCES["grokclocks" if e.basis == "own" else e.basis]
        # ASCII and no TeX special character: the text goes verbatim into a BibTeX note
        assert e.cited_for.isascii() and not re.search(r"[\\^_%&#$~{}]", e.cited_for), (spec_id, e.cited_for)


def test_equation_numbers_match_the_spec_labels():
    """An ID labelled after an equation, theorem or figure is placed at that equation, theorem or figure."""
    forms = [(r"eq(\d+(?:\.\d+)?)$", "eq. ({})"), (r"thm([\dA-Z]+\.\d+)$", "Theorem {}"),
             (r"lem(?:ma)?([\dA-Z]+\.\d+)$", "Lemma {}"), (r"prop(\d+\.\d+)$", "Proposition {}"),
             (r"def(\d+\.\d+)$", "Definition {}"), (r"cor(\d+\.\d+)$", "Corollary {}"),
             (r"asm(\d+\.\d+)$", "Assumption {}"), (r"fig(\d+)$", "Fig. {}"), (r"table(\d+)$", "Table {}")]
    checked = 0
    for spec_id, e in SPEC.items():
        label = spec_id.split(":", 1)[1]
        for pattern, form in forms:
            m = re.match(pattern, label)
            if m:
                assert e.where.startswith(form.format(m.group(1))), (spec_id, e.where)
                checked += 1
    assert checked >= 90


def test_functions_that_are_not_the_papers_results_cite_their_source():
    """`mfpt_1d_exact` is a textbook quadrature: it cites the textbook, not the Kramers paper; a closed form
    derived for grokclocks cites grokclocks; the paper's own results cite the paper to the equation."""
    from grokclocks.kramers import eyring_kramers_time, mfpt_1d_exact, test_potential
    from grokclocks.rmt import mp_laplace, mp_stieltjes

    bib = cite(mfpt_1d_exact)
    assert bib.startswith("@book{gardiner2009stochastic,") and "kramers2026" not in bib and "[kramers:mfpt-1d]" in bib
    assert cite(mp_stieltjes).startswith("@book{bai2010spectral,")
    assert cite(test_potential).startswith("@misc{grokclocks,")
    assert "[levi:gen-closed]" in cite(mp_laplace)
    with pytest.warns(citations.CitationWarning):
        bib = cite(eyring_kramers_time)
    assert bib.startswith("@misc{kramers2026grokkingdelay,") and "Sec. 3.3 (Kramers formula) [kramers:eyring]" in bib
    assert "kramers-11" in bib.split("Corrected by grokclocks:")[1]


def _fields(entry: str) -> list[str]:
    """The field names of one BibTeX entry (one field per line, as grokclocks writes them)."""
    return re.findall(r"^\s*(\w+)\s*=", entry, re.M)


@pytest.mark.parametrize("target", ["levi:eq15", "kramers:arrhenius", "repulsion:woodbury", "clocks:thm4.9",
                                    "grokclocks.compare.compare_run", "kramers:mfpt-1d", "levi:gen-closed"])
def test_bibtex_entries_stay_well_formed(target):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", citations.CitationWarning)
        bib = cite(target)
    for entry in bib.split("\n\n"):
        fields = _fields(entry)
        assert fields.count("note") == 1 and len(fields) == len(set(fields)), fields
        assert entry.count("{") == entry.count("}") and entry.rstrip().endswith("}")
        body = entry.splitlines()[1:-1]
        assert all(line.rstrip().endswith(",") for line in body[:-1]) and not body[-1].rstrip().endswith(","), entry
        note = re.search(r"note\s*=\s*\{(.*)\}$", entry, re.M).group(1)
        assert note.isascii() and not re.search(r"[\\^_%&#$~]", note), note


def test_results_note():
    from grokclocks.citations import _results_note

    assert _results_note([]) == ""
    note = _results_note(["levi:eq15", "levi:eq15"])  # repeated IDs once
    assert note == ("Results used (grokclocks spec IDs): eq. (15), Sec. 3.3.2 (asymptotes) [levi:eq15]. Corrected by "
                    "grokclocks: errata levi-1, levi-3 (grokclocks.errata).")
    with pytest.raises(KeyError, match="levi:nope"):
        _results_note(["levi:nope"])
