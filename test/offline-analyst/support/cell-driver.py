"""A stand-in kernel for the offline analyst's tests: one persistent namespace,
cells as JSON lines on stdin, results as JSON lines on stdout. It echoes the
last expression, counts matplotlib figures (and closes them) and notices an
Altair chart left as the last expression, like the Datalyst kernel does."""
import ast
import contextlib
import io
import json
import os
import sys
import traceback

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

namespace = {'__name__': '__main__'}
protocol = sys.stdout
figure_dir = os.environ.get('FIGURE_DIR')
cell_number = 0

for line in sys.stdin:
    request = json.loads(line)
    cell_number += 1
    buffer = io.StringIO()
    error = None
    value = None
    charts = 0
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        try:
            tree = ast.parse(request['code'])
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            exec(compile(tree, '<cell>', 'exec'), namespace)
            if last is not None:
                result = eval(compile(last, '<cell>', 'eval'), namespace)
                if result is not None:
                    if type(result).__module__.startswith('altair'):
                        result.to_dict()
                        charts += 1
                    else:
                        value = repr(result)
        except BaseException as failure:  # the cell's failure is a result
            error = {'name': type(failure).__name__, 'value': str(failure), 'traceback': traceback.format_exc()}
    figures = plt.get_fignums()
    if figure_dir:
        for index, number in enumerate(figures):
            plt.figure(number).savefig(os.path.join(figure_dir, f'cell{cell_number}-{index + 1}.png'), dpi=60)
    plt.close('all')
    protocol.write(json.dumps({'stdout': buffer.getvalue(), 'value': value, 'error': error,
                               'figures': len(figures), 'charts': charts}) + '\n')
    protocol.flush()
