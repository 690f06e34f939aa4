OK_FORMAT = True

test = {   'name': 'q4',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> import numpy as np\n'
                                               '>>> from gpuperf import roofline\n'
                                               '>>> from gpuperf.grading import call, check_tensor\n'
                                               '>>> _x = np.logspace(-1, 4, 41)\n'
                                               ">>> _want = roofline.attainable_flops(_x.copy(), 'T4', 'fp16')\n"
                                               '>>> check_tensor("roof(x, \'T4\', \'fp16\')", call(\'roof\', roof, _x, \'T4\', \'fp16\'), _want, rtol=1e-06)\n',
                                       'hidden': False,
                                       'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q4', globals())\n", 'hidden': True, 'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
