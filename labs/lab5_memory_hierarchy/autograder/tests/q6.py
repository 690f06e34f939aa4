OK_FORMAT = True

test = {   'name': 'q6',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import collectives\n'
                                               '>>> from gpuperf.grading import answered, call, check_close\n'
                                               ">>> _ref = collectives.collective_time('all-reduce', 1000000000.0, 8, 450000000000.0, 1e-06)\n"
                                               ">>> check_close('ring_allreduce_time(1e9, 8, 450e9, 1e-6)', call('ring_allreduce_time', ring_allreduce_time, 1000000000.0, 8, 450000000000.0, 1e-06), "
                                               "_ref.time_s, unit='s', hints={8 / 7: 'each GPU sends 2(p − 1)/p of the message, not 2·S'})\n"
                                               ">>> check_close('allreduce_algbw(480e9, 8)', call('allreduce_algbw', allreduce_algbw, 480000000000.0, 8), "
                                               "collectives.algorithm_bandwidth(480000000000.0, 'all-reduce', 8), unit='B/s', hints={1.75 ** 2: 'algbw = busbw / (2(p − 1)/p): divide by the factor, "
                                               "do not multiply'})\n"
                                               ">>> _ = answered('n_half_node', n_half_node)\n",
                                       'hidden': False,
                                       'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q6', globals())\n", 'hidden': True, 'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
