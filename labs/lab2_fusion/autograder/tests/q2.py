OK_FORMAT = True

test = {   'name': 'q2',
    'points': 3,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import cost\n'
                                               '>>> from gpuperf.grading import answered, call, check_close\n'
                                               '>>> _n = 2 ** 20\n'
                                               ">>> _ref_fused = cost.elementwise(_n, 'fp32', flops_per_element=3, n_inputs=2)\n"
                                               ">>> check_close('fused_bytes(2**20, 4)', call('fused_bytes', fused_bytes, _n, 4), _ref_fused.bytes, unit='B', hints={2 / 3: 'count the write of y "
                                               "too', 4 / 3: 'the scalar a is passed by value: it costs no HBM traffic'})\n"
                                               ">>> _ = answered('unfused_bytes', unfused_bytes)\n"
                                               ">>> _ = answered('predicted_speedup', predicted_speedup)\n",
                                       'hidden': False,
                                       'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q2', globals())\n", 'hidden': True, 'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
