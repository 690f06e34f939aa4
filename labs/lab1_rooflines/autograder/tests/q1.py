OK_FORMAT = True

test = {   'name': 'q1',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import cost\n'
                                               '>>> from gpuperf.grading import check_close\n'
                                               ">>> check_close('add_intensity', add_intensity, cost.elementwise(2 ** 20, 'fp32', n_inputs=2).intensity, unit='FLOP/B', hints={1.5: 'count the bytes "
                                               "of the output z too (two reads and one write per element)', 2.0: 'an fp32 element is 4 bytes'})\n",
                                       'hidden': False,
                                       'locked': False},
                                   {   'code': '>>> from gpuperf import cost\n'
                                               '>>> from gpuperf.grading import check_close\n'
                                               ">>> check_close('dot_intensity', dot_intensity, cost.dot(4096, 'bf16').intensity, rtol=0.001)\n"
                                               ">>> check_close('matmul_intensity', matmul_intensity, cost.matmul(4096, 4096, 4096, 'bf16').intensity, rtol=0.001)\n",
                                       'hidden': True,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
