OK_FORMAT = True

test = {   'name': 'q2',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import cost, roofline\n'
                                               '>>> from gpuperf.grading import check_close\n'
                                               ">>> ref = roofline.time_bounds(cost.matmul(256, 8192, 8192, 'bf16'), 'H100-SXM', 'bf16')\n"
                                               ">>> check_close('t_math_s', t_math_s, ref.t_math_s, unit='s', hints={0.5: 'a multiply-add is 2 FLOPs'})\n",
                                       'hidden': False,
                                       'locked': False},
                                   {   'code': '>>> from gpuperf import cost, roofline\n'
                                               '>>> from gpuperf.grading import check_choice, check_close\n'
                                               ">>> ref = roofline.time_bounds(cost.matmul(256, 8192, 8192, 'bf16'), 'H100-SXM', 'bf16')\n"
                                               ">>> check_close('t_comms_s', t_comms_s, ref.t_comms_s, unit='s', hints={0.5: 'bf16 is 2 bytes per element'})\n"
                                               ">>> check_close('lower_s', lower_s, ref.lower_s, unit='s')\n"
                                               ">>> check_choice('bound', bound, ref.bound, ['memory', 'compute'])\n",
                                       'hidden': True,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
