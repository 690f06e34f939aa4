OK_FORMAT = True

test = {   'name': 'q5',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import cost, roofline\n'
                                               '>>> from gpuperf.grading import check_mapping\n'
                                               ">>> _ops = {'relu': cost.elementwise(2 ** 24, 'bf16'), 'matmul B=256': cost.matmul(256, 8192, 8192, 'bf16'), 'matmul 8192²': cost.matmul(8192, 8192, "
                                               "8192, 'bf16')}\n"
                                               ">>> _chip_precision = {'T4': 'fp16', 'A100-80GB': 'bf16', 'H100-SXM': 'bf16'}\n"
                                               ">>> check_mapping('verdicts', verdicts, {(op_name, chip_name): roofline.time_bounds(op, chip_name, precision).bound for op_name, op in _ops.items() "
                                               'for chip_name, precision in _chip_precision.items()})\n',
                                       'hidden': False,
                                       'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q5', globals())\n", 'hidden': True, 'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
