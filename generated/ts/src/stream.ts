// @generated stub: the stream checker comes with stream validation.
export {};
