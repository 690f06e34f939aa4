OK_FORMAT = True

test = {   'name': 'q2',
    'points': 3,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import cost\n'
                                               '>>> from gpuperf.grading import call, check_close\n'
                                               '>>> n = 2 ** 20\n'
                                               ">>> ref_fused = cost.elementwise(n, 'fp32', flops_per_element=3, n_inputs=2)\n"
                                               ">>> check_close('fused_bytes(2**20, 4)', call('fused_bytes', fused_bytes, n, 4), ref_fused.bytes, unit='B', hints={2 / 3: 'count the write of y too', "
                                               "4 / 3: 'the scalar a is passed by value: it costs no HBM traffic'})\n",
                                       'hidden': False,
                                       'locked': False},
                                   {   'code': '>>> from gpuperf import cost\n'
                                               '>>> from gpuperf.grading import call, check_close\n'
                                               ">>> for n, precision, size in [(2 ** 20, 'fp32', 4), (12345, 'fp16', 2)]:\n"
                                               '...     unfused = cost.elementwise(n, precision) + cost.elementwise(n, precision, n_inputs=2) + cost.elementwise(n, precision)\n'
                                               '...     fused = cost.elementwise(n, precision, flops_per_element=3, n_inputs=2)\n'
                                               "...     check_close(f'unfused_bytes({n}, {size})', call('unfused_bytes', unfused_bytes, n, size), unfused.bytes, unit='B')\n"
                                               "...     check_close(f'fused_bytes({n}, {size})', call('fused_bytes', fused_bytes, n, size), fused.bytes, unit='B')\n"
                                               ">>> check_close('predicted_speedup', predicted_speedup, 7 / 3, rtol=0.01)\n",
                                       'hidden': True,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
