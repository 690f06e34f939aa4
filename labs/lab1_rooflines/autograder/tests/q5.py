OK_FORMAT = True

test = {   'name': 'q5',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import roofline\n'
                                               '>>> from gpuperf.grading import check_mapping\n'
                                               ">>> check_mapping('verdicts', verdicts, {(op_name, chip_name): roofline.time_bounds(OPS[op_name], chip_name, precision).bound for op_name in ['relu', "
                                               "'matmul 8192²'] for chip_name, precision in CHIP_PRECISION.items()})\n",
                                       'hidden': False,
                                       'locked': False},
                                   {   'code': '>>> from gpuperf import roofline\n'
                                               '>>> from gpuperf.grading import check_mapping\n'
                                               ">>> check_mapping('verdicts', verdicts, {(op_name, chip_name): roofline.time_bounds(op, chip_name, precision).bound for op_name, op in OPS.items() for "
                                               'chip_name, precision in CHIP_PRECISION.items()})\n',
                                       'hidden': True,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
