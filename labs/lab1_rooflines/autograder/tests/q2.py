OK_FORMAT = True

test = {   'name': 'q2',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import cost, roofline\n'
                                               '>>> from gpuperf.grading import answered, check_close\n'
                                               ">>> _ref = roofline.time_bounds(cost.matmul(256, 8192, 8192, 'bf16'), 'H100-SXM', 'bf16')\n"
                                               ">>> check_close('t_math_s', t_math_s, _ref.t_math_s, unit='s', hints={0.5: 'a multiply-add is 2 FLOPs'})\n"
                                               ">>> for _name in ['t_comms_s', 'lower_s', 'bound']:\n"
                                               '...     _ = answered(_name, globals().get(_name, ...))\n',
                                       'hidden': False,
                                       'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q2', globals())\n", 'hidden': True, 'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
