// Generated from vendor/onnx/onnx.proto3 by scripts/generate-onnx-schema.ts (npm run onnx-schema): do not edit.
export const onnxSchema: unknown = {
  "nested": {
    "onnx": {
      "options": {
        "optimize_for": "LITE_RUNTIME"
      },
      "nested": {
        "Version": {
          "values": {
            "_START_VERSION": 0,
            "IR_VERSION_2017_10_10": 1,
            "IR_VERSION_2017_10_30": 2,
            "IR_VERSION_2017_11_3": 3,
            "IR_VERSION_2019_1_22": 4,
            "IR_VERSION_2019_3_18": 5,
            "IR_VERSION_2019_9_19": 6,
            "IR_VERSION_2020_5_8": 7,
            "IR_VERSION_2021_7_30": 8,
            "IR_VERSION_2023_5_5": 9,
            "IR_VERSION_2024_3_25": 10,
            "IR_VERSION_2025_05_12": 11,
            "IR_VERSION_2025_08_26": 12,
            "IR_VERSION_2025_11_06": 13,
            "IR_VERSION": 14
          }
        },
        "AttributeProto": {
          "fields": {
            "name": {
              "type": "string",
              "id": 1
            },
            "ref_attr_name": {
              "type": "string",
              "id": 21
            },
            "doc_string": {
              "type": "string",
              "id": 13
            },
            "type": {
              "type": "AttributeType",
              "id": 20
            },
            "f": {
              "type": "float",
              "id": 2
            },
            "i": {
              "type": "int64",
              "id": 3
            },
            "s": {
              "type": "bytes",
              "id": 4
            },
            "t": {
              "type": "TensorProto",
              "id": 5
            },
            "g": {
              "type": "GraphProto",
              "id": 6
            },
            "sparse_tensor": {
              "type": "SparseTensorProto",
              "id": 22
            },
            "tp": {
              "type": "TypeProto",
              "id": 14
            },
            "floats": {
              "rule": "repeated",
              "type": "float",
              "id": 7
            },
            "ints": {
              "rule": "repeated",
              "type": "int64",
              "id": 8
            },
            "strings": {
              "rule": "repeated",
              "type": "bytes",
              "id": 9
            },
            "tensors": {
              "rule": "repeated",
              "type": "TensorProto",
              "id": 10
            },
            "graphs": {
              "rule": "repeated",
              "type": "GraphProto",
              "id": 11
            },
            "sparse_tensors": {
              "rule": "repeated",
              "type": "SparseTensorProto",
              "id": 23
            },
            "type_protos": {
              "rule": "repeated",
              "type": "TypeProto",
              "id": 15
            }
          },
          "reserved": [
            [
              12,
              12
            ],
            [
              16,
              19
            ],
            "v"
          ],
          "nested": {
            "AttributeType": {
              "values": {
                "UNDEFINED": 0,
                "FLOAT": 1,
                "INT": 2,
                "STRING": 3,
                "TENSOR": 4,
                "GRAPH": 5,
                "SPARSE_TENSOR": 11,
                "TYPE_PROTO": 13,
                "FLOATS": 6,
                "INTS": 7,
                "STRINGS": 8,
                "TENSORS": 9,
                "GRAPHS": 10,
                "SPARSE_TENSORS": 12,
                "TYPE_PROTOS": 14
              }
            }
          }
        },
        "ValueInfoProto": {
          "fields": {
            "name": {
              "type": "string",
              "id": 1
            },
            "type": {
              "type": "TypeProto",
              "id": 2
            },
            "doc_string": {
              "type": "string",
              "id": 3
            },
            "metadata_props": {
              "rule": "repeated",
              "type": "StringStringEntryProto",
              "id": 4
            }
          }
        },
        "NodeProto": {
          "fields": {
            "input": {
              "rule": "repeated",
              "type": "string",
              "id": 1
            },
            "output": {
              "rule": "repeated",
              "type": "string",
              "id": 2
            },
            "name": {
              "type": "string",
              "id": 3
            },
            "op_type": {
              "type": "string",
              "id": 4
            },
            "domain": {
              "type": "string",
              "id": 7
            },
            "overload": {
              "type": "string",
              "id": 8
            },
            "attribute": {
              "rule": "repeated",
              "type": "AttributeProto",
              "id": 5
            },
            "doc_string": {
              "type": "string",
              "id": 6
            },
            "metadata_props": {
              "rule": "repeated",
              "type": "StringStringEntryProto",
              "id": 9
            },
            "device_configurations": {
              "rule": "repeated",
              "type": "NodeDeviceConfigurationProto",
              "id": 10
            }
          }
        },
        "IntIntListEntryProto": {
          "fields": {
            "key": {
              "type": "int64",
              "id": 1
            },
            "value": {
              "rule": "repeated",
              "type": "int64",
              "id": 2
            }
          }
        },
        "NodeDeviceConfigurationProto": {
          "fields": {
            "configuration_id": {
              "type": "string",
              "id": 1
            },
            "sharding_spec": {
              "rule": "repeated",
              "type": "ShardingSpecProto",
              "id": 2
            },
            "pipeline_stage": {
              "type": "int32",
              "id": 3
            }
          }
        },
        "ShardingSpecProto": {
          "fields": {
            "tensor_name": {
              "type": "string",
              "id": 1
            },
            "device": {
              "rule": "repeated",
              "type": "int64",
              "id": 2
            },
            "index_to_device_group_map": {
              "rule": "repeated",
              "type": "IntIntListEntryProto",
              "id": 3
            },
            "sharded_dim": {
              "rule": "repeated",
              "type": "ShardedDimProto",
              "id": 4
            }
          }
        },
        "ShardedDimProto": {
          "fields": {
            "axis": {
              "type": "int64",
              "id": 1
            },
            "simple_sharding": {
              "rule": "repeated",
              "type": "SimpleShardedDimProto",
              "id": 2
            }
          }
        },
        "SimpleShardedDimProto": {
          "oneofs": {
            "dim": {
              "oneof": [
                "dim_value",
                "dim_param"
              ]
            }
          },
          "fields": {
            "dim_value": {
              "type": "int64",
              "id": 1
            },
            "dim_param": {
              "type": "string",
              "id": 2
            },
            "num_shards": {
              "type": "int64",
              "id": 3
            }
          }
        },
        "TrainingInfoProto": {
          "fields": {
            "initialization": {
              "type": "GraphProto",
              "id": 1
            },
            "algorithm": {
              "type": "GraphProto",
              "id": 2
            },
            "initialization_binding": {
              "rule": "repeated",
              "type": "StringStringEntryProto",
              "id": 3
            },
            "update_binding": {
              "rule": "repeated",
              "type": "StringStringEntryProto",
              "id": 4
            }
          }
        },
        "ModelProto": {
          "fields": {
            "ir_version": {
              "type": "int64",
              "id": 1
            },
            "opset_import": {
              "rule": "repeated",
              "type": "OperatorSetIdProto",
              "id": 8
            },
            "producer_name": {
              "type": "string",
              "id": 2
            },
            "producer_version": {
              "type": "string",
              "id": 3
            },
            "domain": {
              "type": "string",
              "id": 4
            },
            "model_version": {
              "type": "int64",
              "id": 5
            },
            "doc_string": {
              "type": "string",
              "id": 6
            },
            "graph": {
              "type": "GraphProto",
              "id": 7
            },
            "metadata_props": {
              "rule": "repeated",
              "type": "StringStringEntryProto",
              "id": 14
            },
            "training_info": {
              "rule": "repeated",
              "type": "TrainingInfoProto",
              "id": 20
            },
            "functions": {
              "rule": "repeated",
              "type": "FunctionProto",
              "id": 25
            },
            "configuration": {
              "rule": "repeated",
              "type": "DeviceConfigurationProto",
              "id": 26
            }
          }
        },
        "DeviceConfigurationProto": {
          "fields": {
            "name": {
              "type": "string",
              "id": 1
            },
            "num_devices": {
              "type": "int32",
              "id": 2
            },
            "device": {
              "rule": "repeated",
              "type": "string",
              "id": 3
            }
          }
        },
        "StringStringEntryProto": {
          "fields": {
            "key": {
              "type": "string",
              "id": 1
            },
            "value": {
              "type": "string",
              "id": 2
            }
          }
        },
        "TensorAnnotation": {
          "fields": {
            "tensor_name": {
              "type": "string",
              "id": 1
            },
            "quant_parameter_tensor_names": {
              "rule": "repeated",
              "type": "StringStringEntryProto",
              "id": 2
            }
          }
        },
        "GraphProto": {
          "fields": {
            "node": {
              "rule": "repeated",
              "type": "NodeProto",
              "id": 1
            },
            "name": {
              "type": "string",
              "id": 2
            },
            "initializer": {
              "rule": "repeated",
              "type": "TensorProto",
              "id": 5
            },
            "sparse_initializer": {
              "rule": "repeated",
              "type": "SparseTensorProto",
              "id": 15
            },
            "doc_string": {
              "type": "string",
              "id": 10
            },
            "input": {
              "rule": "repeated",
              "type": "ValueInfoProto",
              "id": 11
            },
            "output": {
              "rule": "repeated",
              "type": "ValueInfoProto",
              "id": 12
            },
            "value_info": {
              "rule": "repeated",
              "type": "ValueInfoProto",
              "id": 13
            },
            "quantization_annotation": {
              "rule": "repeated",
              "type": "TensorAnnotation",
              "id": 14
            },
            "metadata_props": {
              "rule": "repeated",
              "type": "StringStringEntryProto",
              "id": 16
            }
          },
          "reserved": [
            [
              3,
              3
            ],
            [
              4,
              4
            ],
            [
              6,
              9
            ],
            "ir_version",
            "producer_version",
            "producer_tag",
            "domain"
          ]
        },
        "TensorProto": {
          "fields": {
            "dims": {
              "rule": "repeated",
              "type": "int64",
              "id": 1
            },
            "data_type": {
              "type": "int32",
              "id": 2
            },
            "segment": {
              "type": "Segment",
              "id": 3
            },
            "float_data": {
              "rule": "repeated",
              "type": "float",
              "id": 4,
              "options": {
                "packed": true
              }
            },
            "int32_data": {
              "rule": "repeated",
              "type": "int32",
              "id": 5,
              "options": {
                "packed": true
              }
            },
            "string_data": {
              "rule": "repeated",
              "type": "bytes",
              "id": 6
            },
            "int64_data": {
              "rule": "repeated",
              "type": "int64",
              "id": 7,
              "options": {
                "packed": true
              }
            },
            "name": {
              "type": "string",
              "id": 8
            },
            "doc_string": {
              "type": "string",
              "id": 12
            },
            "raw_data": {
              "type": "bytes",
              "id": 9
            },
            "external_data": {
              "rule": "repeated",
              "type": "StringStringEntryProto",
              "id": 13
            },
            "data_location": {
              "type": "DataLocation",
              "id": 14
            },
            "double_data": {
              "rule": "repeated",
              "type": "double",
              "id": 10,
              "options": {
                "packed": true
              }
            },
            "uint64_data": {
              "rule": "repeated",
              "type": "uint64",
              "id": 11,
              "options": {
                "packed": true
              }
            },
            "metadata_props": {
              "rule": "repeated",
              "type": "StringStringEntryProto",
              "id": 16
            }
          },
          "nested": {
            "DataType": {
              "values": {
                "UNDEFINED": 0,
                "FLOAT": 1,
                "UINT8": 2,
                "INT8": 3,
                "UINT16": 4,
                "INT16": 5,
                "INT32": 6,
                "INT64": 7,
                "STRING": 8,
                "BOOL": 9,
                "FLOAT16": 10,
                "DOUBLE": 11,
                "UINT32": 12,
                "UINT64": 13,
                "COMPLEX64": 14,
                "COMPLEX128": 15,
                "BFLOAT16": 16,
                "FLOAT8E4M3FN": 17,
                "FLOAT8E4M3FNUZ": 18,
                "FLOAT8E5M2": 19,
                "FLOAT8E5M2FNUZ": 20,
                "UINT4": 21,
                "INT4": 22,
                "FLOAT4E2M1": 23,
                "FLOAT8E8M0": 24,
                "UINT2": 25,
                "INT2": 26
              }
            },
            "Segment": {
              "fields": {
                "begin": {
                  "type": "int64",
                  "id": 1
                },
                "end": {
                  "type": "int64",
                  "id": 2
                }
              }
            },
            "DataLocation": {
              "values": {
                "DEFAULT": 0,
                "EXTERNAL": 1
              }
            }
          }
        },
        "SparseTensorProto": {
          "fields": {
            "values": {
              "type": "TensorProto",
              "id": 1
            },
            "indices": {
              "type": "TensorProto",
              "id": 2
            },
            "dims": {
              "rule": "repeated",
              "type": "int64",
              "id": 3
            }
          }
        },
        "TensorShapeProto": {
          "fields": {
            "dim": {
              "rule": "repeated",
              "type": "Dimension",
              "id": 1
            }
          },
          "nested": {
            "Dimension": {
              "oneofs": {
                "value": {
                  "oneof": [
                    "dim_value",
                    "dim_param"
                  ]
                }
              },
              "fields": {
                "dim_value": {
                  "type": "int64",
                  "id": 1
                },
                "dim_param": {
                  "type": "string",
                  "id": 2
                },
                "denotation": {
                  "type": "string",
                  "id": 3
                }
              }
            }
          }
        },
        "TypeProto": {
          "oneofs": {
            "value": {
              "oneof": [
                "tensor_type",
                "sequence_type",
                "map_type",
                "optional_type",
                "sparse_tensor_type",
                "opaque_type"
              ]
            }
          },
          "fields": {
            "tensor_type": {
              "type": "Tensor",
              "id": 1
            },
            "sequence_type": {
              "type": "Sequence",
              "id": 4
            },
            "map_type": {
              "type": "Map",
              "id": 5
            },
            "optional_type": {
              "type": "Optional",
              "id": 9
            },
            "sparse_tensor_type": {
              "type": "SparseTensor",
              "id": 8
            },
            "opaque_type": {
              "type": "Opaque",
              "id": 7
            },
            "denotation": {
              "type": "string",
              "id": 6
            }
          },
          "nested": {
            "Tensor": {
              "fields": {
                "elem_type": {
                  "type": "int32",
                  "id": 1
                },
                "shape": {
                  "type": "TensorShapeProto",
                  "id": 2
                }
              }
            },
            "Sequence": {
              "fields": {
                "elem_type": {
                  "type": "TypeProto",
                  "id": 1
                }
              }
            },
            "Map": {
              "fields": {
                "key_type": {
                  "type": "int32",
                  "id": 1
                },
                "value_type": {
                  "type": "TypeProto",
                  "id": 2
                }
              }
            },
            "Optional": {
              "fields": {
                "elem_type": {
                  "type": "TypeProto",
                  "id": 1
                }
              }
            },
            "SparseTensor": {
              "fields": {
                "elem_type": {
                  "type": "int32",
                  "id": 1
                },
                "shape": {
                  "type": "TensorShapeProto",
                  "id": 2
                }
              }
            },
            "Opaque": {
              "fields": {
                "domain": {
                  "type": "string",
                  "id": 1
                },
                "name": {
                  "type": "string",
                  "id": 2
                }
              },
              "reserved": [
                [
                  3,
                  3
                ],
                "parameters"
              ]
            }
          }
        },
        "OperatorSetIdProto": {
          "fields": {
            "domain": {
              "type": "string",
              "id": 1
            },
            "version": {
              "type": "int64",
              "id": 2
            }
          }
        },
        "OperatorStatus": {
          "values": {
            "EXPERIMENTAL": 0,
            "STABLE": 1
          }
        },
        "FunctionProto": {
          "fields": {
            "name": {
              "type": "string",
              "id": 1
            },
            "input": {
              "rule": "repeated",
              "type": "string",
              "id": 4
            },
            "output": {
              "rule": "repeated",
              "type": "string",
              "id": 5
            },
            "attribute": {
              "rule": "repeated",
              "type": "string",
              "id": 6
            },
            "attribute_proto": {
              "rule": "repeated",
              "type": "AttributeProto",
              "id": 11
            },
            "node": {
              "rule": "repeated",
              "type": "NodeProto",
              "id": 7
            },
            "doc_string": {
              "type": "string",
              "id": 8
            },
            "opset_import": {
              "rule": "repeated",
              "type": "OperatorSetIdProto",
              "id": 9
            },
            "domain": {
              "type": "string",
              "id": 10
            },
            "overload": {
              "type": "string",
              "id": 13
            },
            "value_info": {
              "rule": "repeated",
              "type": "ValueInfoProto",
              "id": 12
            },
            "metadata_props": {
              "rule": "repeated",
              "type": "StringStringEntryProto",
              "id": 14
            }
          },
          "reserved": [
            [
              2,
              2
            ],
            "since_version",
            [
              3,
              3
            ],
            "status"
          ]
        }
      }
    }
  }
};
