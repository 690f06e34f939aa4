OK_FORMAT = True

test = {   'name': 'q1',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import cost\n'
                                               '>>> from gpuperf.grading import answered, check_close\n'
                                               ">>> check_close('add_intensity', add_intensity, cost.elementwise(2 ** 20, 'fp32', n_inputs=2).intensity, unit='FLOP/B', hints={1.5: 'count the bytes "
                                               "of the output z too (two reads and one write per element)', 2.0: 'an fp32 element is 4 bytes'})\n"
                                               ">>> _ = answered('dot_intensity', dot_intensity)\n"
                                               ">>> _ = answered('matmul_intensity', matmul_intensity)\n",
                                       'hidden': False,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
