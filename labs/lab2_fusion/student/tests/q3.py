OK_FORMAT = True

test = {   'name': 'q3',
    'points': 3,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import cost\n'
                                               '>>> from gpuperf.grading import answered, check_mapping\n'
                                               ">>> check_mapping('fused_intensity', fused_intensity, {p: cost.elementwise(1000, p, flops_per_element=3, n_inputs=2).intensity for p in ['fp32', "
                                               "'fp16']})\n"
                                               ">>> _ = answered('matmul_256_bound', matmul_256_bound)\n",
                                       'hidden': False,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
