OK_FORMAT = True

test = {   'name': 'q4',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import roofline\n'
                                               '>>> from gpuperf.grading import call, check_tensor\n'
                                               '>>> x = np.logspace(-1, 4, 41)\n'
                                               '>>> check_tensor("roof(x, \'T4\', \'fp16\')", call(\'roof\', roof, x, \'T4\', \'fp16\'), roofline.attainable_flops(x, \'T4\', \'fp16\'), rtol=1e-06)\n',
                                       'hidden': False,
                                       'locked': False},
                                   {   'code': '>>> from gpuperf import roofline\n'
                                               '>>> from gpuperf.grading import call, check_close, check_tensor\n'
                                               '>>> x = np.logspace(-2, 5, 57)\n'
                                               '>>> check_tensor("roof(x, \'H100-SXM\', \'bf16\')", call(\'roof\', roof, x, \'H100-SXM\', \'bf16\'), roofline.attainable_flops(x, \'H100-SXM\', '
                                               "'bf16'), rtol=1e-06)\n"
                                               '>>> check_close("roof(1.0, \'A100-80GB\', \'fp32\')", np.asarray(call(\'roof\', roof, 1.0, \'A100-80GB\', \'fp32\')).item(), '
                                               "roofline.attainable_flops(1.0, 'A100-80GB', 'fp32'))\n",
                                       'hidden': True,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
