OK_FORMAT = True

test = {   'name': 'q2',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf.grading import answered, call, check_close\n'
                                               '>>> from gpuperf.kernels.copy import copy_cost\n'
                                               ">>> _ref = copy_cost(1000, 'fp32', stride=8)\n"
                                               ">>> check_close('copy_bytes(1000, 8, 4)', call('copy_bytes', copy_bytes, 1000, 8, 4), _ref.bytes_read + _ref.bytes_written, unit='B', hints={2 / 9: 'a "
                                               "stride-8 fp32 read fetches a whole 32-byte sector per element', 8 / 9: 'count the bytes written too'})\n"
                                               ">>> _ = answered('predicted_slowdown', predicted_slowdown)\n",
                                       'hidden': False,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
