import { stageHeader } from '../stages.ts';

/**
 * How loaded tables are kept: `register` tidies a table and notes exact
 * duplicates (the same table saved as CSV, XLSX and SQLite), `looks_misread`
 * catches a CSV read with the wrong delimiter or header, `read_table` runs a
 * profile's load code (only if it is one), and `choose_focus`
 * picks the tables to study in depth and sums up their column kinds (the
 * facts the plan reads).
 */
export function registryCell(maxFocusTables: number): string {
  return String.raw`${stageHeader('registry')}
import ast, csv, hashlib
fingerprints, sampled = {}, {}
shape_listed = set()  # tables whose shape a step has stated (the load step, the tolerant reader)

def register(key, raw, promote=False, total_rows=None):
    """Keep a freshly read table, tidied; note when it repeats a table read before (same data, another format).

    total_rows: the rows of the whole file when raw is already a sample of it (a large CSV read in chunks)."""
    frame = tidy(raw, key=key, promote=promote)
    tables[key] = frame
    problems.pop(key, None)
    hashes = np.sort(pd.util.hash_pandas_object(frame.astype(str), index=False).to_numpy())
    fingerprints[key] = (frame.shape, tuple(frame.columns), hashlib.sha1(hashes.tobytes()).hexdigest())
    same = next((k for k, mark in fingerprints.items() if k != key and k not in duplicates and mark == fingerprints[key]), None)
    if same is not None:
        duplicates[key] = same
    whole = total_rows if total_rows is not None else len(raw)
    if whole > len(raw) or len(raw) > MAX_ROWS:
        sampled[key] = (len(frame), whole)
    print(f'{key}: {shape_of(frame)}' + (f' (a random sample of the {whole} rows)' if key in sampled else '')
          + (f', same data as {same}' if same else ''))

def shape_of(frame, names=12):
    """'0 rows × 2 columns (kitten, win)': the shape, and the column names of a narrow table."""
    text = f'{count_of(len(frame), "row")} × {count_of(frame.shape[1], "column")}'
    if 0 < frame.shape[1] <= names:
        text += ' (' + ', '.join(md(c, 30) for c in frame.columns) + ')'
    return text

def choose_focus(limit=${maxFocusTables}, skip=()):
    """The tables to study in depth: no duplicates, largest first (rows times useful columns)."""
    def weight(key):
        useful = sum(kind in ('number', 'category', 'datetime', 'boolean') for kind in kinds(tables[key]).values())
        return len(tables[key]) * useful
    ranked = sorted((key for key in tables if key not in duplicates and key not in skip), key=lambda key: -weight(key))
    useful = [key for key in ranked if weight(key) > 0]
    focus[:] = ([key for key in useful if len(tables[key]) >= 5] or useful)[:limit]
    counts = {}
    for key in focus:
        for kind in kinds(tables[key]).values():
            counts[kind] = counts.get(kind, 0) + 1
    return {'tables': len(tables), 'unique': len(tables) - len(duplicates), 'focus': focus, 'kinds': counts}

def looks_misread(path, frame):
    """A text table read with fewer columns than most of its lines have fields (wrong delimiter, a preamble)."""
    with open(path, encoding='latin-1') as handle:
        lines = [line for line in handle.read(65536).splitlines() if line.strip()][:200]
    fields = max((sorted(len(next(csv.reader([line], delimiter=sep), [])) for line in lines) or [1])[len(lines) // 2]
                 for sep in (',', ';', '\t', '|'))
    # Columns with no value are not counted (a wrong delimiter's empty spill-over), except in a table of no rows:
    # a header-only CSV's columns are all empty, and it is not misread.
    columns = frame.shape[1] if len(frame) == 0 else frame.dropna(axis=1, how='all').shape[1]
    return fields >= 2 and fields > 1.5 * columns

# A table's load code comes from the sandbox's profile through the conversation's text, where a question
# could write look-alike text: it runs only when it is what the profile writes (a pandas reader, or
# sqlite3.connect, with literal arguments, and the few methods the JSON shapes use), never as any Python.
LOAD_CALLS = {('pd', 'read_csv'), ('pd', 'read_excel'), ('pd', 'read_json'), ('pd', 'read_parquet'),
              ('pd', 'read_sql_query'), ('pd', 'json_normalize'), ('sqlite3', 'connect')}
LOAD_METHODS = {'tolist', 'rename_axis', 'reset_index'}

def is_load_code(node):
    if isinstance(node, ast.Expression):
        return is_load_code(node.body)
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return isinstance(node.operand, ast.Constant)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(is_load_code(item) for item in node.elts)
    if isinstance(node, ast.Dict):
        return all(key is not None and is_load_code(key) for key in node.keys) and all(is_load_code(v) for v in node.values)
    if isinstance(node, ast.Subscript):
        return is_load_code(node.value) and is_load_code(node.slice)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        arguments = all(is_load_code(a) for a in node.args) and all(
            k.arg is not None and is_load_code(k.value) for k in node.keywords)
        owner = node.func.value
        if isinstance(owner, ast.Name):
            return arguments and (owner.id, node.func.attr) in LOAD_CALLS
        return arguments and node.func.attr in LOAD_METHODS and isinstance(owner, (ast.Call, ast.Subscript)) and is_load_code(owner)
    return False

def read_table(load, reader):
    tree = ast.parse(load, mode='eval')
    if not is_load_code(tree):
        raise ValueError('its load code is not a pandas reader with literal arguments')
    return eval(compile(tree, '<load>', 'eval'), {'__builtins__': {}, 'pd': reader, 'sqlite3': sqlite3})

print('Registry ready: register, looks_misread, choose_focus, read_table.')`;
}
