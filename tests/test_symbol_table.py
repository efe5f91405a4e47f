"""The flat form's symbol table keeps an array's instances' records as a block, made only
when read: every way of reading it (a record, a column of a field, the records in order,
a grown table) gives what records made one by one would."""

import casadi as cs
import pytest

from acausal.flat import Symbol
from acausal.flatten import flatten
from examples.ladders import chain, rc_ladder

FIELDS = [f for f in Symbol._fields if f != "sym"]


def _same(a: object, b: object) -> bool:
    return a is b or (not isinstance(a, cs.SX) and not isinstance(b, cs.SX) and a == b)


@pytest.mark.parametrize("build", [chain, rc_ladder])
def test_a_blocks_records_columns_and_order_agree(build):
    system = build(4, True)
    table, fresh = flatten(system).symbols, flatten(system).symbols
    assert table._blocks  # (the arrays' records are kept as blocks)
    names = list(table)
    assert names == list(table.index) and len(table) == len(names)
    one_by_one = [fresh[n] for n in names[::-1]][::-1]  # read in another order
    assert [r.name for r in one_by_one] == names
    in_order = list(table.values())
    assert [r.name for r in in_order] == names == [n for n, _ in table.items()]
    for field in FIELDS:
        column = table.column(field).tolist()
        assert all(map(_same, column, [getattr(r, field) for r in in_order])), field
        assert [str(getattr(r, field)) for r in one_by_one] == list(map(str, column)), field
    picked = names[::3]
    assert all(map(_same, table.column("start", picked), [table[n].start for n in picked]))
    # each record's symbol is the stack's entry of its row
    assert cs.is_equal(table.take(names), cs.vertcat(*[r.sym for r in one_by_one]))
    assert "nothing" not in table and table.get("nothing", 1) == 1
    with pytest.raises(KeyError):
        table["nothing"]


def test_a_grown_table_reads_the_blocks_of_the_first():
    flat = flatten(chain(3, True))
    table = flat.symbols
    name = flat.variables[-1]
    record = table[name].derivative()
    grown = table.extended({record.name: record})
    made = dict.__len__(grown)  # (the records made so far: the table's given ones, a chunk)
    assert made < len(table) and dict.__len__(table) == made - 1
    assert list(grown) == [*table, record.name]
    assert grown[name] is table[name] and grown[record.name] is record
    assert grown.column("order", [name, record.name]).tolist() == [0, 1]
    assert cs.is_equal(grown.take([record.name, name]), cs.vertcat(record.sym, table[name].sym))


@pytest.mark.parametrize("arrays", [True, False])
@pytest.mark.parametrize("build", [chain, rc_ladder])
def test_the_kinds_and_connection_entries_rows_are_their_names_rows(build, arrays):
    """The rows the flat form gives by index arithmetic (each kind's, the connection
    rows' variables') are the rows of the names it lists."""
    flat = flatten(build(4, arrays))
    index = flat.symbols.index
    lists = {"variable": flat.variables, "parameter": flat.parameters}
    lists["discrete"] = flat.discretes
    for kind, names in lists.items():
        assert flat.kind_rows[kind].tolist() == [index[n] for n in names]
    entries = flat.connection_entries
    assert entries.rows.tolist() == [index[n] for n in entries.names]


@pytest.mark.parametrize("build", [chain, rc_ladder])
def test_the_local_names_shapes_by_rows_are_the_names(build):
    """Alias elimination's local names' shapes (length, a dot) of the variables read by
    the table's rows (a block's from its template) are those of their names."""
    from acausal.structure.alias import _local_shapes, _table_shapes

    flat = flatten(build(4, True))
    rows = flat.kind_rows["variable"]
    (components,) = flat.symbols.columns(["component"], rows=rows)
    ours = _table_shapes(flat.symbols, rows)
    theirs = _local_shapes(list(flat.variables), components.tolist())
    assert all((a == b).all() for a, b in zip(ours, theirs))


@pytest.mark.parametrize("build", [chain, rc_ladder])
def test_the_keys_of_arrays_read_as_the_dict_of_every_pair(build):
    """A flat form's ``keys`` (own name -> dotted name) finds an array instance's symbol
    by its token without a dict entry per quantity, and reads as the dict of every pair
    (the components' then the arrays', instance after instance) in every other way."""
    import copy
    import pickle

    from acausal.symbols import named_around
    from acausal.table import Keys

    flat = flatten(build(4, True))
    table = flat.keys
    pairs = dict(dict.items(table))  # the components' pairs, given
    for b in table._blocks:
        pairs |= zip(named_around(b.around, b.tokens), b.names)
    lookups = copy.copy(table)  # (the same object: nothing written yet)
    for key, name in list(pairs.items())[::-1]:
        assert lookups[key] == name == lookups.get(key) and key in lookups
    for missing in ("nothing", "@v0123456789:x", "der(" + next(iter(pairs)) + ")", 3):
        assert missing not in lookups and lookups.get(missing, 1) == 1
    with pytest.raises(KeyError):
        lookups["@p" + table._blocks[0].tokens[0] + ":nothing"]
    again = pickle.loads(pickle.dumps(table))
    assert isinstance(again, Keys) and again._blocks  # (pickled without its pairs)
    assert list(table.items()) == list(pairs.items()) and not table._blocks
    assert table == pairs == again and len(again) == len(pairs) and list(again) == list(pairs)
    assert repr(table) == repr(pairs) and table.copy() == pairs and (table | {}) == pairs
    with pytest.raises(TypeError):
        table["x"] = "y"
