"""A deliberately naive workspace profile for the offline analyst's tests
(the sandbox's profiler does far better): one table per CSV/JSON file read
with pandas' defaults, one per Excel sheet, one per SQLite table, and the
pandas expression that loads it. Messy files come out badly on purpose, so
that the analyst's tidy steps and tolerant reader are exercised."""
import json
import os
import sqlite3

import pandas as pd

files = []
for name in sorted(os.listdir('.')):
    path = os.path.join('.', name)
    if not os.path.isfile(path):
        continue
    entry = {'path': name, 'sizeBytes': os.path.getsize(path), 'format': 'unsupported', 'tables': [], 'error': None, 'notes': []}
    suffix = name.lower().rsplit('.', 1)[-1]
    loads = []
    try:
        if suffix == 'csv':
            entry['format'] = 'csv'
            loads = [('', f'pd.read_csv({name!r})')]
        elif suffix in ('xlsx', 'xls'):
            entry['format'] = 'excel'
            loads = [(sheet, f'pd.read_excel({name!r}, sheet_name={sheet!r})') for sheet in pd.ExcelFile(path).sheet_names]
        elif suffix in ('sqlite', 'db'):
            entry['format'] = 'sqlite'
            with sqlite3.connect(path) as connection:
                names = [row[0] for row in connection.execute("select name from sqlite_master where type='table'")]
            loads = [(table, f'pd.read_sql_query("select * from {table}", sqlite3.connect({name!r}))') for table in names]
        for table, load in loads:
            frame = eval(load)
            entry['tables'].append({
                'name': table, 'rows': len(frame), 'columnsTruncated': False, 'loadCode': load,
                'read': {'encoding': None, 'delimiter': None, 'headerRow': 0, 'skipRows': 0, 'sheet': None, 'table': None,
                         'decimal': None, 'thousands': None, 'naValues': []},
                'columns': [{'name': str(column), 'dtype': str(frame[column].dtype), 'kind': 'text',
                             'missing': int(frame[column].isna().sum()), 'unique': None,
                             'samples': [str(v) for v in frame[column].dropna().head(3)], 'min': None, 'max': None}
                            for column in frame.columns],
            })
    except Exception as error:
        entry['error'] = f'{type(error).__name__}: {error}'[:200]
        entry['tables'] = []
    files.append(entry)
print(json.dumps({'files': files, 'truncated': False}))
