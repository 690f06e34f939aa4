OK_FORMAT = True

test = {   'name': 'q4',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> import numpy as np\n'
                                               '>>> from gpuperf import attention\n'
                                               '>>> from gpuperf.grading import call, check_tensor\n'
                                               '>>> _rng = np.random.default_rng(11)\n'
                                               '>>> _x = _rng.normal(0, 3, (3, 40))\n'
                                               '>>> _x[1, :20] += 8.0\n'
                                               '>>> _v = _rng.normal(0, 1, (40, 8))\n'
                                               '>>> _want = attention.softmax(_x) @ _v\n'
                                               '>>> for _splits in (1, 4, 7):\n'
                                               "...     check_tensor(f'combine_splits of {_splits} chunks', call('combine_splits', combine_splits, *split_partials(_x, _v, _splits)), _want, "
                                               'atol=1e-09, rtol=1e-09)\n',
                                       'hidden': False,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
